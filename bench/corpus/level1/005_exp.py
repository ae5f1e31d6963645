"""Elementwise exponential of a 4D activation tensor."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = width = 128


class Model(nn.Module):
    def forward(self, x):
        return torch.exp(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2]


def get_init_inputs():
    return []
