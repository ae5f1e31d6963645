"""Depthwise 3D convolution (groups = channels) with dilation 2, no bias."""

import torch
import torch.nn as nn

batch_size = 4
channels = 128
depth = 32
height = width = 64


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, kernel_size=3, padding=2, dilation=2, groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels]
