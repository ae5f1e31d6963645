"""Darknet convolution: Conv2d 3x3, BatchNorm2d, LeakyReLU(0.1), then a 2x2 max pool."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
img_size = 208


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.pool = nn.MaxPool2d(2, 2)

    def forward(self, x):
        return self.pool(nn.functional.leaky_relu(self.bn(self.conv(x)), 0.1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, img_size, img_size)]


def get_init_inputs():
    return [in_channels, out_channels]
