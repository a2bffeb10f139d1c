"""A plain PyTorch script that profiles itself with torch.profiler (Kineto on
torch 2.x: CPU activity, shapes, FLOPs), as a user would: a small CNN trained
for --steps steps under the profiler, the trace exported with torch's own
export_chrome_trace to OUT.json, and torch's own key_averages() written to
OUT.ops.json as {name: [calls, self CPU us, total CPU us]}, for a test that
compares them with what proftop reads from the trace."""
import argparse
import json

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=6)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 8 * 8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, record_shapes=True, with_flops=True) as prof:
        for _ in range(a.steps):
            x = torch.randn(16, 3, 16, 16)
            y = torch.randint(0, 10, (16,))
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(a.out + ".json")
    ops = {}
    for e in prof.key_averages():
        ops[e.key] = [e.count, e.self_cpu_time_total, e.cpu_time_total]
    with open(a.out + ".ops.json", "w") as f:
        json.dump(ops, f)
    print("RESULT ops=%d" % len(ops))


if __name__ == "__main__":
    main()
