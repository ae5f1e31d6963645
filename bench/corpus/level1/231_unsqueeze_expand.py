"""Materialises a broadcast: unsqueeze a (batch, dim) tensor and expand it over a new sequence axis."""

import torch
import torch.nn as nn

batch_size = 512
seq_len = 256
dim = 1024


class Model(nn.Module):
    def __init__(self, seq_len):
        super().__init__()
        self.seq_len = seq_len

    def forward(self, x):
        return x.unsqueeze(1).expand(-1, self.seq_len, -1).contiguous()


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [seq_len]
