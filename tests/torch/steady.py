"""A plain PyTorch training script (no proftop import) that runs long enough
to be attached to: --steps optimizer steps of a small MLP on a DataLoader,
--sleep-ms of extra work per step. Ends with its steps, final loss (the same
for the same arguments, whatever else happens to the process) and the
longest gap between two steps (how long the process was paused at most);
--sched adds a StepLR scheduler (made with the optimizer, as most jobs do;
--sched onecycle a OneCycleLR, stepped every step):

  RESULT steps=N loss=L maxgap_ms=G
It writes its pid to --pidfile once training has started."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--sleep-ms", type=float, default=2.0)
    ap.add_argument("--pidfile", default="")
    ap.add_argument("--sched", nargs="?", const="step", default="",
                    choices=("step", "onecycle"))
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sched = None
    if a.sched == "step":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.9)
    elif a.sched == "onecycle":
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=a.steps + 1)
    crit = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(64 * 50, 32, generator=g), torch.randint(0, 4, (64 * 50,), generator=g))
    loader = DataLoader(data, batch_size=64)
    steps, maxgap, last = 0, 0.0, None
    while steps < a.steps:
        for x, y in loader:
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            steps += 1
            now = time.perf_counter()
            if last is not None:
                maxgap = max(maxgap, now - last)
            last = now
            if steps == 5 and a.pidfile:
                import os
                with open(a.pidfile + ".tmp", "w") as f:
                    f.write("%d\n" % os.getpid())
                os.rename(a.pidfile + ".tmp", a.pidfile)
            time.sleep(a.sleep_ms / 1000.0)
            if steps >= a.steps:
                break
    print("RESULT steps=%d loss=%.6f maxgap_ms=%.1f" % (steps, loss.item(), maxgap * 1e3), flush=True)


if __name__ == "__main__":
    main()
