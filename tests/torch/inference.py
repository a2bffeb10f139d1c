#!/usr/bin/python3
"""A plain PyTorch script (no proftop import): evaluation only, no optimizer:
a model in eval mode under torch.no_grad over a DataLoader. Ends with

  RESULT steps=N samples=S loop_s=T data_s=D fwd_s=F bwd_s=0 opt_s=0
(steps = forward passes)."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10)).eval()
    loader = DataLoader(TensorDataset(torch.randn(a.steps * a.batch, 128)), batch_size=a.batch)
    data = fwd = 0.0
    steps = samples = 0
    correct = 0
    t_loop = time.perf_counter()
    t = t_loop
    with torch.no_grad():
        for (x,) in loader:
            t1 = time.perf_counter()
            data += t1 - t
            out = model(x)
            t2 = time.perf_counter()
            fwd += t2 - t1
            # scoring the batch is neither loading nor the model's forward
            correct += int((out.argmax(1) == 0).sum())
            t = time.perf_counter()
            steps += 1
            samples += x.shape[0]
    # a step ends where its forward does (proftop's rule for inference)
    loop = t2 - t_loop
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=0 opt_s=0 "
          "correct=%d" % (steps, samples, loop, data, fwd, correct), flush=True)


if __name__ == "__main__":
    main()
