"""Video residual unit: Conv3d (1x3x3), BatchNorm3d, ReLU, Conv3d (3x1x1), BatchNorm3d, add input, ReLU."""

import torch
import torch.nn as nn

batch_size = 8
channels = 64
frames = 16
height = width = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.spatial = nn.Conv3d(channels, channels, (1, 3, 3), padding=(0, 1, 1), bias=False)
        self.bn1 = nn.BatchNorm3d(channels)
        self.temporal = nn.Conv3d(channels, channels, (3, 1, 1), padding=(1, 0, 0), bias=False)
        self.bn2 = nn.BatchNorm3d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.spatial(x)))
        out = self.bn2(self.temporal(out))
        return torch.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, frames, height, width)]


def get_init_inputs():
    return [channels]
