"""DistributedDataParallel with gloo on the CPU (no proftop import), for
torchrun: each step loads a batch, runs an all_gather and a broadcast of its
own, then DDP's forward and backward (its bucketed all-reduce) and the
optimizer. Every rank's data loading can take --data-ms (a sleep). One rank
can be made slow (a busy loop in its data loading, --slow-rank / --slow-ms,
from step --slow-from on) or made to hang before a step's collectives
(--hang-rank / --hang-at / --hang-s: it sleeps in its data loading). Under torch 1.13, whose
torchrun does not start on Python 3.11, launch2.sh (SCRIPT=collectives.py)
starts two ranks.

With --clocks DIR each rank writes DIR/rank<R>.txt: one line per all_gather
and broadcast it entered, "op step t_ns" (time.monotonic_ns(), the clock
proftop's events carry), so a test can compute the arrival skew from the
script's own clocks. Ends with "RESULT rank=R steps=N loss=L"."""
import argparse
import os
import time

import torch
import torch.distributed as dist
from dist_leave import leave
from torch import nn


class Data(torch.utils.data.Dataset):
    def __init__(self, rank, a):
        self.rank, self.a = rank, a

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        a = self.a
        step = i // a.batch
        if i % a.batch == 0:
            if a.data_ms > 0:
                time.sleep(a.data_ms / 1000.0)
            if self.rank == a.slow_rank and a.slow_ms > 0 and step >= a.slow_from:
                end = time.monotonic() + a.slow_ms / 1000.0
                while time.monotonic() < end:
                    pass
            if self.rank == a.hang_rank and step == a.hang_at:
                print("HANG rank=%d step=%d t_ns=%d" % (self.rank, step, time.monotonic_ns()),
                      flush=True)
                time.sleep(a.hang_s)
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), torch.randn(2, generator=g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ap.add_argument("--slow-from", type=int, default=0)
    ap.add_argument("--data-ms", type=float, default=0.0)
    ap.add_argument("--hang-rank", type=int, default=-1)
    ap.add_argument("--hang-at", type=int, default=-1)
    ap.add_argument("--hang-s", type=float, default=0.0)
    ap.add_argument("--clocks", default="")
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(Data(rank, a), batch_size=a.batch, shuffle=False)
    log = open(os.path.join(a.clocks, "rank%d.txt" % rank), "w") if a.clocks else None
    world = dist.get_world_size()
    loss = None
    for step, (x, y) in enumerate(loader):
        if step >= a.steps:
            break
        # after the batch, before the model: a rank slow in its data
        # loading arrives late here
        v = x.sum().reshape(1)
        out = [torch.zeros(1) for _ in range(world)]
        if log:
            log.write("all_gather %d %d\n" % (step, time.monotonic_ns()))
        dist.all_gather(out, v)
        if log:
            log.write("broadcast %d %d\n" % (step, time.monotonic_ns()))
        dist.broadcast(v, src=0)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if log:
        log.close()
    print("RESULT rank=%d steps=%d loss=%.9f" % (rank, a.steps, float(loss)), flush=True)
    leave()


if __name__ == "__main__":
    main()
