"""Sums an NCHW tensor over its spatial dimensions (2, 3)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 512
height = width = 56


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
