"""2D average pooling, 3x3 window, stride 2, padding 1, counting padded zeros."""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = width = 112


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.downsample = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.downsample(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [3, 2, 1]
