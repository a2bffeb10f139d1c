"""A plain PyTorch script (no proftop import): a model of nested modules, a
ModuleList of blocks each holding a ModuleList of layers, trained with SGD on
a list-backed DataLoader. Ends with the same RESULT line as cnn_loader.py."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(2)])
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.norm(x)


class Tower(nn.Module):
    def __init__(self, width=64, depth=3):
        super().__init__()
        self.embed = nn.Linear(32, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        x = self.embed(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    xs = torch.randn(a.steps * a.batch, 32)
    ys = torch.randint(0, 4, (a.steps * a.batch,))
    loader = DataLoader(TensorDataset(xs, ys), batch_size=a.batch)
    model = Tower()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    data = fwd = bwd = optim = 0.0
    steps = samples = 0
    t_loop = time.perf_counter()
    t = t_loop
    for x, y in loader:
        t1 = time.perf_counter()
        data += t1 - t
        loss = crit(model(x), y)
        t2 = time.perf_counter()
        fwd += t2 - t1
        opt.zero_grad()
        t2b = time.perf_counter()
        optim += t2b - t2
        loss.backward()
        t3 = time.perf_counter()
        bwd += t3 - t2b
        opt.step()
        t = time.perf_counter()
        optim += t - t3
        steps += 1
        samples += x.shape[0]
    loop = time.perf_counter() - t_loop
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=%.6f opt_s=%.6f "
          "loss=%.6f" % (steps, samples, loop, data, fwd, bwd, optim, loss.item()), flush=True)


if __name__ == "__main__":
    main()
