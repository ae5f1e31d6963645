"""MaxPool3d (3D) 3, stride=3, padding=0, dilation=1, ceil_mode=False, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 256
depth = 13
height = width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(3, stride=3, padding=0, dilation=1, ceil_mode=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
