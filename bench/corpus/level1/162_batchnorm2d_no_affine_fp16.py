"""BatchNorm2d without affine parameters, half-precision input and statistics."""

import torch
import torch.nn as nn

batch_size = 128
channels = 256
height = width = 28


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, affine=False, dtype=torch.float16)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [channels]
