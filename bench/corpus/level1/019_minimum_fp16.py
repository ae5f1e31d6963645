"""Elementwise minimum of two half-precision 4D tensors."""

import torch
import torch.nn as nn

batch_size = 64
channels = 128
height, width = 64, 64


class Model(nn.Module):
    def forward(self, x, y):
        return torch.minimum(x, y)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width, dtype=torch.float16)
    y = torch.randn(batch_size, channels, height, width, dtype=torch.float16)
    return [x, y]


def get_init_inputs():
    return []
