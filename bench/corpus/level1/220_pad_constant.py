"""Constant padding of the last two dimensions with asymmetric amounts and a non-zero value."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 127
width = 255


class Model(nn.Module):
    def forward(self, x):
        return F.pad(x, (0, 1, 2, 3), mode="constant", value=-1.0)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
