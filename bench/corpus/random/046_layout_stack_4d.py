"""Stacks 4 tensors along a new dim 0 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 83
channels = 221
height = 32
width = 32


class Model(nn.Module):
    def forward(self, x0, x1, x2, x3):
        return torch.stack([x0, x1, x2, x3], dim=0)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float16), torch.randn(batch_size, channels, height, width, dtype=torch.float16), torch.randn(batch_size, channels, height, width, dtype=torch.float16), torch.randn(batch_size, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return []
