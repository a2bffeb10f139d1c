"""A plain PyTorch training script (no proftop import) with a pause between
epochs, as an evaluation or a checkpoint makes one: --epochs E of --steps N
steps each, and --pause S seconds without any step between them. With
--pause-file PATH it creates PATH when a pause begins (a test waits for it)
and removes it when the pause ends. Ends with "RESULT steps=N".
"""
import argparse
import os
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--pause", type=float, default=5.0)
    ap.add_argument("--pause-file", default="")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8 * 16 * 16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    steps = 0
    for epoch in range(a.epochs):
        if epoch:
            if a.pause_file:
                open(a.pause_file, "w").close()
            time.sleep(a.pause)  # no step: evaluation, a checkpoint
            if a.pause_file:
                os.unlink(a.pause_file)
        for _ in range(a.steps):
            x, y = torch.randn(16, 3, 16, 16), torch.randint(0, 10, (16,))
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    print("RESULT steps=%d" % steps, flush=True)


if __name__ == "__main__":
    main()
