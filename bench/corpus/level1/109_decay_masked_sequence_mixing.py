"""Causal sequence mixing: a learned (T x T) matrix is masked to its lower triangle and applied to every sequence."""

import torch
import torch.nn as nn

batch = 64
seq_len = 1024
channels = 512


class Model(nn.Module):
    def __init__(self, seq_len):
        super().__init__()
        self.mix = nn.Parameter(torch.randn(seq_len, seq_len) / seq_len ** 0.5)

    def forward(self, x):
        return torch.tril(self.mix) @ x


def get_inputs():
    return [torch.randn(batch, seq_len, channels)]


def get_init_inputs():
    return [seq_len]
