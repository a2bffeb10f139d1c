"""FSDP (torch 2.x's fully_shard) with gloo on the CPU, no proftop import,
for torchrun: each step loads a batch (rank --slow-rank busy --slow-ms
more), runs forward, backward (FSDP's all-gathers and reduce-scatters) and
the optimizer. Ends with "RESULT rank=R steps=N loss=L"."""
import argparse
import time

import torch
import torch.distributed as dist
from dist_leave import leave
from torch import nn
from torch.distributed.fsdp import fully_shard


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    loss = None
    for step in range(a.steps):
        x, y = torch.randn(8, 32, generator=g), torch.randn(8, 2, generator=g)
        if rank == a.slow_rank:
            end = time.monotonic() + a.slow_ms / 1000.0
            while time.monotonic() < end:
                pass
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("RESULT rank=%d steps=%d loss=%.9f" % (rank, a.steps, float(loss)), flush=True)
    leave()


if __name__ == "__main__":
    main()
