"""Fused chain: Conv2d 1x1 -> groupnorm -> silu -> maxpool (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 56
in_channels = 96
out_channels = 200
height = width = 72


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, padding=0, bias=False)
        self.norm = nn.GroupNorm(4, out_channels)

    def forward(self, x):
        y = self.conv(x)
        y = self.norm(y)
        y = F.silu(y)
        y = F.max_pool2d(y, 2)
        return y


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
