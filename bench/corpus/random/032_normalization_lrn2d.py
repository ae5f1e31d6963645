"""LocalResponseNorm across 5 channels (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 32
channels = 328
height = width = 32


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.LocalResponseNorm(5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2 + 0.5]


def get_init_inputs():
    return [channels]
