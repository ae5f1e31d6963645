"""Fused chain: Conv2d 1x1 -> groupnorm -> hardswish -> maxpool (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 256
out_channels = 256
height = width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, padding=0, bias=False)
        self.norm = nn.GroupNorm(16, out_channels)

    def forward(self, x):
        y = self.conv(x)
        y = self.norm(y)
        y = F.hardswish(y)
        y = F.max_pool2d(y, 2)
        return y


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
