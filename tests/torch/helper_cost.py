"""What a module call costs inside this job, timed by the job itself (no
proftop import): in its model's forward, N calls of a parameter-free child
module through nn.Module.__call__ as the job sees it, against N calls of the
function that __call__ wraps when something has wrapped it (__wrapped__, as
functools.wraps and proftop's helper leave it), alternately, ROUNDS times;
the fastest round of each, their difference per call. Then a few SGD steps, so the job has steps.
Ends with

  RESULT steps=N percall_ns=X wrapped=0|1

(percall_ns 0 when nothing wraps Module.__call__)."""
import argparse
import time

import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self, n, rounds):
        super().__init__()
        self.leaf = nn.Identity()
        self.lin = nn.Linear(4, 1)
        self.n, self.rounds, self.per = n, rounds, []

    def forward(self, x):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls % 5 == 1:
            call = nn.Module.__call__
            bare = getattr(call, "__wrapped__", None)
            leaf, pc = self.leaf, time.perf_counter_ns
            fb = fw = float("inf")
            for _ in range(self.rounds if bare is not None else 0):
                t0 = pc()
                for _ in range(self.n):
                    bare(leaf, 0)
                t1 = pc()
                for _ in range(self.n):
                    leaf(0)
                t2 = pc()
                fb, fw = min(fb, t1 - t0), min(fw, t2 - t1)
            self.per.append((fw - fb) / self.n if bare is not None else 0.0)
        return self.lin(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=21)
    a = ap.parse_args()
    torch.manual_seed(0)
    m = Probe(a.calls, a.rounds)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    for _ in range(a.steps):
        opt.zero_grad()
        m(torch.randn(8, 4)).sum().backward()
        opt.step()
    wrapped = getattr(nn.Module.__call__, "__wrapped__", None) is not None
    print("RESULT steps=%d percall_ns=%.1f percall_min_ns=%.1f percall_max_ns=%.1f wrapped=%d"
          % (a.steps, m.per[0], min(m.per), max(m.per), wrapped))


if __name__ == "__main__":
    main()
