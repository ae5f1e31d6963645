"""Adaptive max pooling of sequences of length 1000 to 64 bins."""

import torch
import torch.nn as nn

batch_size = 256
channels = 128
seq_len = 1000
bins = 64


class Model(nn.Module):
    def __init__(self, bins):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool1d(bins)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [bins]
