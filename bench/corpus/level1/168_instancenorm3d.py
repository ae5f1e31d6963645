"""InstanceNorm3d with affine parameters over volumetric features."""

import torch
import torch.nn as nn

batch_size = 4
channels = 32
depth = 64
height = width = 64


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm3d(channels, affine=True, eps=1e-5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels]
