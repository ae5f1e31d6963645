"""nn.Conv2d kernel 1, stride 1, padding 0, dilation 1, groups 1 (pointwise), float16 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 104
out_channels = 64
height = 120
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, stride=1, padding=0, dilation=1,
                              groups=1, bias=True, dtype=torch.float16)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels]
