"""A GAN trained the way PyTorch's dcgan example trains one (no proftop
import): per batch from a DataLoader, D on the real batch and on G's fakes,
D's optimizer steps, then G through D, and G's optimizer steps: two
optimizers, one training iteration per batch. Small MLPs on random "images",
so it runs on any CPU. It times its own phases with time.perf_counter as
proftop defines them (Forward: each outermost model call and each loss
module call; Optimization: the optimizers' step and zero_grad; a model's own
zero_grad is not an optimizer's) and ends with

  RESULT steps=N samples=S loop_s=T data_s=D fwd_s=F bwd_s=B opt_s=O

where steps are batches and samples the real images seen."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--nz", type=int, default=32)
    ap.add_argument("--width", type=int, default=256)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    dim = 16 * 16
    data = TensorDataset(torch.randn(a.batches * a.batch, dim))
    dataloader = DataLoader(data, batch_size=a.batch, shuffle=True)
    netG = nn.Sequential(nn.Linear(a.nz, a.width), nn.ReLU(), nn.Linear(a.width, dim), nn.Tanh())
    netD = nn.Sequential(nn.Linear(dim, a.width), nn.LeakyReLU(0.2), nn.Linear(a.width, 1),
                         nn.Sigmoid())
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    clock = time.perf_counter
    t = {"data": 0.0, "fwd": 0.0, "bwd": 0.0, "opt": 0.0}

    def timed(key, f, *args):
        s = clock()
        out = f(*args)
        t[key] += clock() - s
        return out

    steps = samples = 0
    t0 = clock()
    it = iter(dataloader)
    while True:
        s = clock()
        try:
            (real,) = next(it)
        except StopIteration:
            t["data"] += clock() - s
            break
        t["data"] += clock() - s
        b = real.size(0)
        # (1) D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((b, 1), 1.0)
        output = timed("fwd", netD, real)
        errD_real = timed("fwd", criterion, output, label)
        timed("bwd", errD_real.backward)
        noise = torch.randn(b, a.nz)
        fake = timed("fwd", netG, noise)
        label.fill_(0.0)
        output = timed("fwd", netD, fake.detach())
        errD_fake = timed("fwd", criterion, output, label)
        timed("bwd", errD_fake.backward)
        timed("opt", optimizerD.step)
        # (2) G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(1.0)
        output = timed("fwd", netD, fake)
        errG = timed("fwd", criterion, output, label)
        timed("bwd", errG.backward)
        timed("opt", optimizerG.step)
        steps += 1
        samples += b
    loop = clock() - t0
    print("RESULT steps=%d samples=%d loop_s=%.6f data_s=%.6f fwd_s=%.6f bwd_s=%.6f opt_s=%.6f "
          "lossD=%.4f lossG=%.4f" % (steps, samples, loop, t["data"], t["fwd"], t["bwd"], t["opt"],
                                    (errD_real + errD_fake).item(), errG.item()))


if __name__ == "__main__":
    main()
