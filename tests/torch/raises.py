"""A training loop whose model raises in forward every 5th step; the script
catches the error and goes on. The exception must reach it unchanged."""
import torch
from torch import nn


class Flaky(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(8, 8)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = self.inner(x)
        if self.calls % 5 == 0:
            raise ValueError("flaky forward %d" % self.calls)
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.flaky = Flaky()

    def forward(self, x):
        return self.flaky(self.a(x)).sum()


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
caught = steps = 0
for i in range(30):
    x = torch.randn(4, 8)
    try:
        loss = model(x)
    except ValueError as e:
        assert str(e).startswith("flaky forward"), e
        assert type(e) is ValueError
        caught += 1
        continue
    opt.zero_grad()
    loss.backward()
    opt.step()
    steps += 1
print("RESULT steps=%d caught=%d" % (steps, caught))
