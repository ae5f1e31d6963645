"""Transposed 2D convolution with kernel 2 and stride 2 (non-overlapping upsampling)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 512
out_channels = 256
height = width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=2, stride=2)

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
