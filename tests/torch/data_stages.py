"""A training loop whose data pipeline costs known times: the Dataset's
__getitem__ sleeps, then a torchvision Compose of two transforms that sleep
(SlowA, SlowB). The script times each of them itself and prints the means
per sample it saw (RESULT get_ms= a_ms= b_ms=), with the number of steps and
the loop's time (loop_s).
--workers N (default 2), --iterable (an IterableDataset instead), --epochs E
(workers restart every epoch), --get-ms, --a-ms, --b-ms (the costs),
--start-method fork|spawn|forkserver (how the workers start).
--slow-worker-ms X: worker 0 sleeps X ms more per sample, so batches from
the others arrive out of order and wait while the training waits for worker
0's; the script counts the fetches that waited (longer than half of worker
0's extra time per batch: RESULT waited= fetches=).
Without torchvision the Compose is left out (RESULT compose=0)."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, IterableDataset

try:
    from torchvision import transforms as T
except Exception:  # noqa: BLE001
    T = None


def nap(ms):
    time.sleep(ms / 1000.0)  # wall time, no CPU: the machine's load barely moves it


class SlowA(object):
    def __init__(self, ms):
        self.ms = ms

    def __call__(self, d):
        t = time.perf_counter()
        nap(self.ms)
        d["a_ms"] = (time.perf_counter() - t) * 1000.0
        return d


class SlowB(SlowA):
    def __call__(self, d):
        t = time.perf_counter()
        nap(self.ms)
        d["b_ms"] = (time.perf_counter() - t) * 1000.0
        return d


SLOW_WORKER_MS = 0.0


def make(i, get_ms, tf):
    t = time.perf_counter()
    info = torch.utils.data.get_worker_info()
    nap(get_ms + (SLOW_WORKER_MS if info is not None and info.id == 0 else 0.0))
    g = torch.Generator().manual_seed(i)
    d = {"x": torch.randn(8, generator=g), "y": i % 2, "a_ms": 0.0, "b_ms": 0.0}
    if tf is not None:
        d = tf(d)
    d["get_ms"] = (time.perf_counter() - t) * 1000.0
    return d


class Slow(Dataset):
    def __init__(self, n, get_ms, tf):
        self.n, self.get_ms, self.tf = n, get_ms, tf
        self.transform = tf

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return make(i, self.get_ms, self.tf)


class SlowStream(IterableDataset):
    def __init__(self, n, get_ms, tf):
        self.n, self.get_ms, self.tf = n, get_ms, tf
        self.transform = tf

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        k, w = (info.id, info.num_workers) if info else (0, 1)
        for i in range(k, self.n, w):
            yield make(i, self.get_ms, self.tf)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--start-method", default=None)
    ap.add_argument("--iterable", action="store_true")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--get-ms", type=float, default=1.0)
    ap.add_argument("--a-ms", type=float, default=2.0)
    ap.add_argument("--b-ms", type=float, default=6.0)
    ap.add_argument("--slow-worker-ms", type=float, default=0.0)
    a = ap.parse_args()
    SLOW_WORKER_MS = a.slow_worker_ms
    torch.manual_seed(0)
    tf = T.Compose([SlowA(a.a_ms), SlowB(a.b_ms)]) if T is not None else None
    n = a.batches * a.batch
    ds = (SlowStream if a.iterable else Slow)(n, a.get_ms, tf)
    loader = DataLoader(ds, batch_size=a.batch, num_workers=a.workers,
                        multiprocessing_context=a.start_method if a.workers else None)
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps, seen = 0, 0
    t0 = time.perf_counter()
    sums = {"get_ms": 0.0, "a_ms": 0.0, "b_ms": 0.0}
    waited = fetches = 0
    for _ in range(a.epochs):
        it = iter(loader)
        while True:
            t = time.perf_counter()
            try:
                d = next(it)
            except StopIteration:
                break
            fetches += 1
            waited += (time.perf_counter() - t) * 1000.0 > 0.5 * a.slow_worker_ms * a.batch
            loss = nn.functional.cross_entropy(model(d["x"]), d["y"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            seen += len(d["y"])
            for k in sums:
                sums[k] += float(d[k].sum())
    loop_s = time.perf_counter() - t0
    print("RESULT steps=%d samples=%d compose=%d get_ms=%.4f a_ms=%.4f b_ms=%.4f loop_s=%.4f "
          "waited=%d fetches=%d"
          % (steps, seen, tf is not None, sums["get_ms"] / seen, sums["a_ms"] / seen,
             sums["b_ms"] / seen, loop_s, waited, fetches))
