"""Two threads run the same model at once (inference, no optimizer); each
counts its own forwards."""
import threading

import torch
from torch import nn

torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).eval()
counts = [0, 0]


def work(k):
    with torch.no_grad():
        for _ in range(40):
            model(torch.randn(8, 16))
            counts[k] += 1


ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("RESULT forwards=%d" % sum(counts))
