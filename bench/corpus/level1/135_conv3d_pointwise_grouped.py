"""Grouped pointwise (1x1x1) 3D convolution with 4 groups."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 256
out_channels = 512
depth = 8
height = width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 1, groups=groups)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 4]
