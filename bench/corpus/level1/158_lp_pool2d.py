"""Power-average (LP, p=2) 2D pooling, 2x2 windows, over non-negative maps."""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.LPPool2d(2, kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return []
