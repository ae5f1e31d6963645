"""Adaptive 3D average pooling of video features to (1, 7, 7)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 256
frames = 8
height = width = 28


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d((1, 7, 7))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, frames, height, width)]


def get_init_inputs():
    return []
