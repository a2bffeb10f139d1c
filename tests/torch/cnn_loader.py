"""A plain PyTorch training script (no proftop import): a small CNN on random
images through a DataLoader (--workers N, started by --start-method), SGD with a StepLR scheduler. It times
its own phases with time.perf_counter and ends with one line that proftop's
tests compare with proftop's report:

  RESULT steps=N samples=S loop_s=T data_s=D fwd_s=F bwd_s=B opt_s=O

With --mark-file PATH it creates PATH once --mark-after steps are done (a
test waits for it, then looks at the steps that follow).
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, n, read_ms):
        self.n, self.read_ms = n, read_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.read_ms:
            time.sleep(self.read_ms / 1000.0)
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 16, 16, generator=g), i % 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--read-ms", type=float, default=0.5)
    ap.add_argument("--mark-after", type=int, default=20)
    ap.add_argument("--mark-file", default="")
    ap.add_argument("--start-method", default=None, help="the workers': fork, spawn, forkserver")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
    crit = nn.CrossEntropyLoss()
    loader = DataLoader(Images(a.steps * a.batch, a.read_ms), batch_size=a.batch,
                        num_workers=a.workers, shuffle=False,
                        multiprocessing_context=a.start_method if a.workers else None)
    data = fwd = bwd = optim = 0.0
    steps = samples = 0
    t_loop = time.perf_counter()
    t = t_loop
    for x, y in loader:
        t1 = time.perf_counter()
        data += t1 - t
        out = model(x)
        loss = crit(out, y)
        t2 = time.perf_counter()
        fwd += t2 - t1
        opt.zero_grad()
        t3 = time.perf_counter()
        optim += t3 - t2
        loss.backward()
        t4 = time.perf_counter()
        bwd += t4 - t3
        opt.step()
        sched.step()
        t = time.perf_counter()
        optim += t - t4
        steps += 1
        samples += x.shape[0]
        if a.mark_file and steps == a.mark_after:
            open(a.mark_file, "w").close()
    # to the end of the last step: the loop's last __next__ (StopIteration,
    # which shuts the workers down: slow with spawn) begins no step
    loop = t - t_loop
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=%.6f opt_s=%.6f "
          "loss=%.6f" % (steps, samples, loop, data, fwd, bwd, optim, loss.item()), flush=True)


if __name__ == "__main__":
    main()
