"""Grouped 3x3 convolution with 32 groups (ResNeXt style), stride 2."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
groups = 32
height = width = 56


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, stride=2, padding=1, groups=groups, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
