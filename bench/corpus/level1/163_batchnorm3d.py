"""BatchNorm3d over a 5D video feature tensor."""

import torch
import torch.nn as nn

batch_size = 8
channels = 64
depth = 16
height = width = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn3d = nn.BatchNorm3d(channels)

    def forward(self, x):
        return self.bn3d(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels]
