"""PReLU with one learned slope per channel on NCHW input."""

import torch
import torch.nn as nn

batch_size = 32
num_channels = 256
height = width = 64


class Model(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        self.prelu = nn.PReLU(num_parameters=num_channels, init=0.1)

    def forward(self, x):
        return self.prelu(x)


def get_inputs():
    return [torch.randn(batch_size, num_channels, height, width)]


def get_init_inputs():
    return [num_channels]
