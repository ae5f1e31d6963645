"""Adaptive avg pooling (2D) to (7, 1), float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 58
channels = 512
height = 32
width = 54


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 1))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
