"""Leaky ReLU with negative slope 0.2 on an image batch."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
height, width = 128, 128


class Model(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.act = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [0.2]
