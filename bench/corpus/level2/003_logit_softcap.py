"""Output head with logit soft-capping: (h @ W^T) / cap, tanh, times cap."""

import torch
import torch.nn as nn

batch = 8
seq_len = 512
d_model = 2048
vocab = 32768


class Model(nn.Module):
    def __init__(self, d_model, vocab, softcap):
        super().__init__()
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.softcap = softcap

    def forward(self, h):
        logits = self.lm_head(h)
        return torch.tanh(logits / self.softcap) * self.softcap


def get_inputs():
    return [torch.randn(batch, seq_len, d_model)]


def get_init_inputs():
    return [d_model, vocab, 30.0]
