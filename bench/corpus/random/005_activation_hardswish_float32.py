"""hardswish activation on a 4D float32 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Hardswish()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32) * 3]


def get_init_inputs():
    return []
