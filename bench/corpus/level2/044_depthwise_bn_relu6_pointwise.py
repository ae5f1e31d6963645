"""Depthwise 3x3 conv, BN, ReLU6, pointwise 1x1 conv, BN (a depthwise-separable convolution)."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 256
height = width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, 3, stride, 1, groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        x = torch.clamp(self.bn1(self.dw(x)), 0, 6)
        return self.bn2(self.pw(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
