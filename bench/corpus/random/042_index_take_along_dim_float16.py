"""Take_along_dim with a per-row permutation, float16 (random spec, seed 2026)."""

import torch
import torch.nn as nn

rows = 1024
cols = 64
num_index = 16384


class Model(nn.Module):
    def forward(self, x, order):
        return torch.take_along_dim(x, order, dim=1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16), torch.argsort(torch.rand(rows, cols), dim=1)]


def get_init_inputs():
    return []
