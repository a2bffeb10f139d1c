"""A plain PyTorch script (no proftop import): an MLP fed by a Python generator
(no DataLoader; --data-ms: the generator sleeps that long per batch, as a
reader would), gradient accumulation over --accum micro-batches, AdamW.
Times its own phases; ends with

  RESULT steps=N samples=S loop_s=T data_s=D fwd_s=F bwd_s=B opt_s=O
"""
import argparse
import time

import torch
from torch import nn


def batches(n, batch, seed, data_ms):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        if data_ms:
            time.sleep(data_ms / 1000.0)
        x = torch.randn(batch, 64, generator=g)
        yield x, (x.sum(1) > 0).long()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--data-ms", type=float, default=0.0)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                          nn.Linear(512, 2))
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = fwd = bwd = optim = 0.0
    steps = samples = 0
    gen = batches(a.steps * a.accum, a.batch, 1, a.data_ms)
    t_loop = time.perf_counter()
    t = t_loop
    for step in range(a.steps):
        for _ in range(a.accum):
            x, y = next(gen)
            t1 = time.perf_counter()
            data += t1 - t
            loss = crit(model(x), y) / a.accum
            t2 = time.perf_counter()
            fwd += t2 - t1
            loss.backward()
            t = time.perf_counter()
            bwd += t - t2
            samples += x.shape[0]
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        optim += t3 - t
        t = t3
        steps += 1
    loop = time.perf_counter() - t_loop
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=%.6f opt_s=%.6f "
          "loss=%.6f" % (steps, samples, loop, data, fwd, bwd, optim, loss.item()), flush=True)


if __name__ == "__main__":
    main()
