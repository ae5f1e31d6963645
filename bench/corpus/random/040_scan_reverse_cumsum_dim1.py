"""Reverse cumsum along dim of a 2D tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 256
dim = 11024


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
