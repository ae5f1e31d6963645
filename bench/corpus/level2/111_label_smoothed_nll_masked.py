"""Label-smoothed sequence loss: log_softmax, NLL at targets mixed with the mean over the vocabulary, padding masked out."""

import torch
import torch.nn as nn

batch = 32
tgt_len = 256
vocab = 32000
pad_id = 1


class Model(nn.Module):
    def __init__(self, eps, pad_id):
        super().__init__()
        self.eps = eps
        self.pad_id = pad_id

    def forward(self, logits, target):
        lprobs = torch.log_softmax(logits, dim=-1)
        nll = -lprobs.gather(dim=-1, index=target.unsqueeze(-1)).squeeze(-1)
        smooth = -lprobs.mean(dim=-1)
        loss = (1.0 - self.eps) * nll + self.eps * smooth
        keep = target.ne(self.pad_id)
        return (loss * keep).sum() / keep.sum()


def get_inputs():
    target = torch.randint(2, vocab, (batch, tgt_len))
    target[:, 200:] = pad_id
    return [torch.randn(batch, tgt_len, vocab), target]


def get_init_inputs():
    return [0.1, pad_id]
