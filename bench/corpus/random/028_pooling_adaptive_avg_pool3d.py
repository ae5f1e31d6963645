"""Adaptive avg pooling (3D) to (7, 1, 7), float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 24
channels = 504
depth = 16
height = width = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d((7, 1, 7))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
