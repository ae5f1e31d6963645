"""amin over (channels) of a 4D tensor, keepdim=False (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 128
channels = 100
height = 72
width = 72


class Model(nn.Module):
    def forward(self, x):
        return torch.amin(x, dim=1, keepdim=False)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.float32)]


def get_init_inputs():
    return []
