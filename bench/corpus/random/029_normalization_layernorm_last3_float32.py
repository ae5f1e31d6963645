"""LayerNorm over (channels, height, width) of a 4D float32 tensor, affine=False (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 61
channels = 32
height = 120
width = 120


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.norm = nn.LayerNorm(normalized_shape, eps=0.001, elementwise_affine=False, dtype=torch.float32)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32) * 2 + 1]


def get_init_inputs():
    return [(channels, height, width,)]
