"""A plain PyTorch training script (no proftop import) whose model is wrapped
in torch.compile (inductor, on the CPU): a small MLP on a list-backed
DataLoader, SGD. The first step compiles the forward and the backward; with
--reshape-at K the batch grows from step K on, so the compiled frame's guards
fail and it is compiled again (a recompile); --graph-break puts a print in
the forward (a graph break); --recompile-every N passes the forward a new
string every N steps, which Dynamo specializes on: a recompile each time.

The script times its own phases with time.perf_counter and tells a compiling
step by TorchDynamo's own frame counter (torch._dynamo.utils.counters):
a step during which it grew compiled something. Its RESULT line gives the
steady-state figures (the steps that compiled left out) beside the compiling
steps' numbers (1 = the first step):

  RESULT steps=N samples=S loop_s=T data_s=D fwd_s=F bwd_s=B opt_s=O compiled=1,K
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, graph_break=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.head = nn.Linear(128, 4)
        self.graph_break = graph_break

    def forward(self, x, mode="a"):
        x = self.body(x)
        if self.graph_break:
            print("", end="")  # Dynamo cannot trace print: a graph break
        if mode.endswith("1"):
            x = x * 1.0
        return self.head(x)


def frames_compiled():
    utils = __import__("torch._dynamo.utils", fromlist=["counters"])
    return utils.counters["frames"]["total"] + utils.counters["aot_autograd"]["total"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reshape-at", type=int, default=0)
    ap.add_argument("--graph-break", action="store_true")
    ap.add_argument("--recompile-every", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    n_small = (a.reshape_at - 1 if a.reshape_at else a.steps) * a.batch
    n_big = (a.steps - a.reshape_at + 1) * (a.batch + 16) if a.reshape_at else 0
    loaders = [DataLoader(TensorDataset(torch.randn(n_small, 32), torch.randint(0, 4, (n_small,))),
                          batch_size=a.batch)]
    if n_big:
        loaders.append(DataLoader(TensorDataset(torch.randn(n_big, 32),
                                                torch.randint(0, 4, (n_big,))),
                                  batch_size=a.batch + 16))
    model = Net(a.graph_break)
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    data = fwd = bwd = optim = 0.0
    steps = samples = 0
    compiled = []
    loop = 0.0
    for loader in loaders:
        t = time.perf_counter()
        for x, y in loader:
            c0 = frames_compiled()
            t0 = t
            t1 = time.perf_counter()
            mode = "m%d" % (steps // a.recompile_every) if a.recompile_every else "a"
            loss = crit(cmodel(x, mode), y)
            t2 = time.perf_counter()
            opt.zero_grad()
            t3 = time.perf_counter()
            loss.backward()
            t4 = time.perf_counter()
            opt.step()
            t = time.perf_counter()
            steps += 1
            if frames_compiled() != c0:
                compiled.append(steps)
                continue  # a compiling step: not a steady-state figure
            data += t1 - t0
            fwd += t2 - t1
            optim += (t3 - t2) + (t - t4)
            bwd += t4 - t3
            loop += t - t0
            samples += x.shape[0]
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=%.6f opt_s=%.6f "
          "compiled=%s loss=%.6f" % (steps, samples, loop, data, fwd, bwd, optim,
                                     ",".join(map(str, compiled)), loss.item()), flush=True)


if __name__ == "__main__":
    main()
