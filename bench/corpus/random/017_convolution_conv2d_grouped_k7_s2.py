"""nn.Conv2d kernel 7, stride 2, padding 0, dilation 1, groups 8 (grouped), float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
height = 64
width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=0, dilation=1,
                              groups=8, bias=True, dtype=torch.float32)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=torch.float32)]


def get_init_inputs():
    return [in_channels, out_channels]
