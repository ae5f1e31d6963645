"""Depthwise 5x5 convolution with stride 2 and channel multiplier 2 (groups = in_channels)."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 96
multiplier = 2
height = width = 112


class Model(nn.Module):
    def __init__(self, in_channels, multiplier):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels * multiplier, 5, stride=2, padding=2, groups=in_channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, multiplier]
