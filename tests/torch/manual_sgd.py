"""A PyTorch training loop with the weights updated by hand, as PyTorch's
word_language_model example does (no torch.optim; no proftop import):
forward, backward, then p -= lr * p.grad under no_grad. It times itself and
ends with

  RESULT steps=N samples=S loop_s=L data_s=0 fwd_s=F bwd_s=B opt_s=0

(the update is not an optimizer step: proftop counts it in Others). It
writes its pid to --pidfile once training has started; --steps 0 runs until
killed. --forward-only runs forward passes with gradients and nothing else
(a loop proftop finds no steps in)."""
import argparse
import os
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--pidfile", default="")
    ap.add_argument("--forward-only", action="store_true")
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=512)  # steps of milliseconds, not microseconds
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, a.width), nn.ReLU(), nn.Linear(a.width, 4))
    x, y = torch.randn(a.batch, 64), torch.randint(0, 4, (a.batch,))
    clock = time.perf_counter
    i, fwd, bwd = 0, 0.0, 0.0
    t0 = clock()
    while not a.steps or i < a.steps:
        t = clock()
        out = model(x)
        fwd += clock() - t  # the model's forward (the loss, a function, is not in it)
        loss = nn.functional.cross_entropy(out, y)
        if not a.forward_only:
            model.zero_grad()
            t = clock()
            loss.backward()
            bwd += clock() - t
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.01 * p.grad
        if i == 0 and a.pidfile:
            with open(a.pidfile, "w") as f:
                f.write("%d\n" % os.getpid())
        i += 1
    loop = clock() - t0
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=0 fwd_s=%.6f bwd_s=%.6f opt_s=0 "
          "loss=%.6f" % (i, i * a.batch, loop, fwd, bwd, loss.item()))


if __name__ == "__main__":
    main()
