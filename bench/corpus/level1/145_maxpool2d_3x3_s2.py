"""2D max pooling, 3x3 window, stride 2, padding 1 (ResNet stem pool)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 64
height = width = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
