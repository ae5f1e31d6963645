"""Clamps every element into [min_val, max_val]."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return torch.clamp(x, min=self.min_val, max=self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3]


def get_init_inputs():
    return [-1.5, 2.0]
