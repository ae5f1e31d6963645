"""Grouped transposed 3D convolution with kernel (3, 5, 5), stride (1, 2, 2) and 2 groups."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 64
depth = 12
height = 48
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2),
                                       output_padding=(0, 1, 1), groups=2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
