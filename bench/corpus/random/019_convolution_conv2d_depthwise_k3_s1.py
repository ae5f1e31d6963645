"""nn.Conv2d kernel 3, stride 1, padding 1, dilation 1, groups 80 (depthwise), float16 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 48
in_channels = 80
out_channels = 80
height = width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=1, padding=1, dilation=1,
                              groups=80, bias=True, dtype=torch.float16)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels]
