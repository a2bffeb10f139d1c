#!/usr/bin/python3
"""torch_train.py - a small, real PyTorch training loop marked for proftop with
one call, proftop.torch.instrument(model, optimizer, loader).

A small CNN learns to classify random 1x16x16 images into 10 classes (each
class is a fixed random pattern plus noise), on the CPU, with a DataLoader
whose workers can be slow (--reader-ms per sample batch) and prefetch
(--num-workers). Run it under proftop:

    proftop run -- /usr/bin/python3 examples/torch_train.py --steps 200 --num-workers 0

Without proftop it trains the same, and proftop.* calls do nothing. Ends with
one line: steps, final loss, mean step time and samples/s.
"""
import argparse
import os
import signal
import sys
import time

try:
    import proftop
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import proftop

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Patterns(Dataset):
    """Sample i: class i % 10's fixed pattern plus noise, from (seed, i) alone."""

    def __init__(self, n, seed, reader_ms):
        g = torch.Generator().manual_seed(seed)
        self.templates = torch.randn(10, 1, 16, 16, generator=g)
        self.n, self.seed, self.reader_ms = n, seed, reader_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.reader_ms > 0:
            time.sleep(self.reader_ms / 1000.0)
        g = torch.Generator().manual_seed(self.seed * 1000003 + i)
        y = int(torch.randint(0, 10, (1,), generator=g))
        x = self.templates[y] + 1.5 * torch.randn(1, 16, 16, generator=g)
        return x, y


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        return self.fc(self.flatten(x))


def positive(kind):
    def parse(s):
        v = kind(s)
        if v < 0:
            raise argparse.ArgumentTypeError("must be >= 0")
        return v
    return parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=positive(int), default=100,
                    help="optimizer steps (0: until SIGINT/SIGTERM; default 100)")
    ap.add_argument("--batch", type=positive(int), default=32, help="batch size (default 32)")
    ap.add_argument("--num-workers", type=positive(int), default=0,
                    help="DataLoader worker processes (default 0)")
    ap.add_argument("--reader-ms", type=positive(float), default=0.0,
                    help="simulated read time per sample in ms (default 0)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log-every", type=positive(int), default=20)
    ap.add_argument("--threads", type=positive(int), default=1,
                    help="torch intra-op threads (default 1, for repeatable timings)")
    args = ap.parse_args()
    if args.batch == 0:
        ap.error("--batch must be > 0")

    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))

    data = Patterns(10 ** 9, args.seed, args.reader_ms)
    loader = DataLoader(data, batch_size=args.batch, shuffle=False,
                        num_workers=args.num_workers, drop_last=True)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    proftop.torch.instrument(model, optimizer, loader)

    print("torch_train: torch %s batch=%d num_workers=%d reader_ms=%g steps=%d"
          % (torch.__version__, args.batch, args.num_workers, args.reader_ms, args.steps),
          flush=True)
    step, loss_v = 0, float("nan")
    t0 = time.monotonic()
    for x, y in loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        loss_v = loss.item()
        if args.log_every and step % args.log_every == 0:
            print("step %d loss %.6f" % (step, loss_v), flush=True)
        if stop or (args.steps and step >= args.steps):
            break
    dt = time.monotonic() - t0
    print("torch_train: done steps=%d loss=%.9g step_ms=%.3f ips=%.1f%s"
          % (step, loss_v, dt * 1e3 / max(step, 1), step * args.batch / dt if dt > 0 else 0,
             " (stopped)" if stop else ""), flush=True)


if __name__ == "__main__":
    main()
