"""Adaptive max pooling (2D) to (1, 2), float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = 64
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d((1, 2))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
