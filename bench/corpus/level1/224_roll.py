"""Cyclic shift of a (batch, H, W, C) tensor by (-3, -3) on the spatial dimensions (shifted windows)."""

import torch
import torch.nn as nn

batch_size = 64
resolution = 56
channels = 128
shift = 3


class Model(nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.shift = shift

    def forward(self, x):
        return torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))


def get_inputs():
    return [torch.randn(batch_size, resolution, resolution, channels)]


def get_init_inputs():
    return [shift]
