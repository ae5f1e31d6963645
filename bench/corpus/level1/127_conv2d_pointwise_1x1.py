"""Pointwise (1x1) 2D convolution that expands 128 -> 512 channels."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 512
height = width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.expand = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.expand(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
