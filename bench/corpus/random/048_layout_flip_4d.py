"""Flip along dims (0,) (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 32
channels = 208
height = 32
width = 32


class Model(nn.Module):
    def forward(self, x):
        return torch.flip(x, dims=(0,))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
