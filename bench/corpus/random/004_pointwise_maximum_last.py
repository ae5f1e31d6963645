"""Elementwise maximum of two float32 tensors (b broadcast over leading dims) (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 256
hidden = 392


class Model(nn.Module):
    def forward(self, a, b):
        return torch.maximum(a, b)


def get_inputs():
    a = torch.randn(batch_size, seq_len, hidden, dtype=torch.float32)
    b = torch.randn(1, 1, hidden, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []
