"""any over (batch_size) of a 4D tensor, keepdim=True (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 128
channels = 126
height = 64
width = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.any(x, dim=0, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) > 2.5]


def get_init_inputs():
    return []
