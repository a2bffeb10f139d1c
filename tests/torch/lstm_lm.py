"""A word-level LSTM language model trained the way PyTorch's
word_language_model example trains one (no proftop import): the corpus
batchified into (tokens, batch) columns, get_batch() slicing (seq_len, batch)
pieces, the hidden state carried over and detached, gradients clipped and
the weights updated by hand (p.data.add_(p.grad, alpha=-lr)), no torch.optim
and no DataLoader. A random corpus, so it runs anywhere. It times itself and
ends with

  RESULT steps=N samples=S tokens=T loop_s=L data_s=0 fwd_s=F bwd_s=B opt_s=0

where a step is a batch, samples the batch size per step (not the sequence
length: the input is sequence-first) and Forward the model's and the loss's
calls (the update is not an optimizer step: proftop counts it in Others)."""
import argparse
import time

import torch
from torch import nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return nn.functional.log_softmax(self.decoder(output), dim=-1), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=20)
    ap.add_argument("--bptt", type=int, default=35)
    ap.add_argument("--ntoken", type=int, default=2000)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    corpus = torch.randint(0, a.ntoken, (a.batch_size * (a.batches * a.bptt + 1),))
    train_data = batchify(corpus, a.batch_size)
    model = RNNModel(a.ntoken, 64, 64, 2)
    criterion = nn.NLLLoss()
    lr, clock = 20.0, time.perf_counter
    hidden = model.init_hidden(a.batch_size)
    fwd = bwd = 0.0
    steps = tokens = 0
    t0 = clock()
    for batch, i in enumerate(range(0, train_data.size(0) - 1, a.bptt)):
        data, targets = get_batch(train_data, i, a.bptt)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        t = clock()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, a.ntoken), targets)
        fwd += clock() - t
        t = clock()
        loss.backward()
        bwd += clock() - t
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        steps += 1
        tokens += data.numel()
    loop = clock() - t0
    print("RESULT steps=%d samples=%d tokens=%d loop_s=%.6f data_s=0 fwd_s=%.6f bwd_s=%.6f "
          "opt_s=0 loss=%.4f" % (steps, steps * a.batch_size, tokens, loop, fwd, bwd, loss.item()))


if __name__ == "__main__":
    main()
