"""A PyTorch training loop with the weights updated by hand (no torch.optim;
no proftop import): forward, backward, then p -= lr * p.grad under no_grad.
It writes its pid to --pidfile once training has started and runs --steps
steps (0: until killed)."""
import argparse

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--pidfile", default="")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    x, y = torch.randn(64, 32), torch.randint(0, 4, (64,))
    i = 0
    while not a.steps or i < a.steps:
        loss = nn.functional.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
        if i == 0 and a.pidfile:
            import os
            with open(a.pidfile, "w") as f:
                f.write("%d\n" % os.getpid())
        i += 1
    print("RESULT steps=%d loss=%.6f" % (i, loss.item()))


if __name__ == "__main__":
    main()
