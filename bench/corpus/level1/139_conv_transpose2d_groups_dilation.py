"""Grouped transposed 2D convolution (4 groups) with dilation 2, asymmetric kernel (3, 5), no bias."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 64
width = 96
groups = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, (3, 5), stride=1, padding=(2, 4),
                                         dilation=2, groups=groups, bias=False)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
