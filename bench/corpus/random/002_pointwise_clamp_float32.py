"""Clamp of a float32 tensor into [-2.25, 0.24] (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 88
seq_len = 1278
hidden = 256


class Model(nn.Module):
    def __init__(self, min_value, max_value):
        super().__init__()
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        return torch.clamp(x, self.min_value, self.max_value)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden, dtype=torch.float32) * 2]


def get_init_inputs():
    return [-2.25, 0.24]
