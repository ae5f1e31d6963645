"""3D max pooling, kernel 3, stride 2, padding 1, ceil_mode."""

import torch
import torch.nn as nn

batch_size = 8
channels = 64
frames = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, ceil_mode):
        super().__init__()
        self.temporal_pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode)

    def forward(self, x):
        return self.temporal_pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, frames, height, width)]


def get_init_inputs():
    return [3, 2, 1, True]
