"""A DataLoader with two 'spawn' workers (new Python processes that import
torch); only the training process may record."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(20 * 16, 8), torch.randint(0, 2, (20 * 16,)))
    loader = DataLoader(data, batch_size=16, num_workers=2, multiprocessing_context="spawn")
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    print("RESULT steps=%d" % steps)
