"""A plain DistributedDataParallel training script (gloo, CPU; no proftop
import), for a launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT (torchrun, or tests/torch/launch2.sh). Rank 1 is slowed by
--slow-ms per step, so it is the straggler; with --die-at N rank 1 dies
(exit 3, no clean-up) before its step N. Ends with

  RESULT rank=R steps=N"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from dist_leave import leave
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--slow-ms", type=float, default=5.0)
    ap.add_argument("--die-at", type=int, default=0)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(a.steps):
        if rank == 1 and a.die_at and i == a.die_at:
            print("RESULT rank=1 died at step %d" % i, flush=True)
            os._exit(3)
        x = torch.randn(8, 16)
        if rank == 1 and a.slow_ms:
            time.sleep(a.slow_ms / 1000.0)
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("RESULT rank=%d steps=%d" % (rank, a.steps), flush=True)
    leave()


if __name__ == "__main__":
    main()
