"""Depthwise 2D convolution: one 3x3 filter per channel, stride 1, padding 1."""

import torch
import torch.nn as nn

batch_size = 32
channels = 384
height = width = 56
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels,
                                   bias=False)

    def forward(self, x):
        return self.depthwise(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
