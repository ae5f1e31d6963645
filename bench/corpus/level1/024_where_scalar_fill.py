"""Replaces negative entries by a scalar using torch.where with a computed condition."""

import torch
import torch.nn as nn

batch_size = 256
seq_len = 2048
hidden = 512


class Model(nn.Module):
    def __init__(self, fill_value: float):
        super().__init__()
        self.fill_value = fill_value

    def forward(self, x):
        return torch.where(x < 0, torch.full_like(x, self.fill_value), x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [-0.5]
