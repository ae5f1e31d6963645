"""nn.ConvTranspose3d kernel 3, stride 3, padding 0, output_padding 0, dilation 1, groups 1, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 22
in_channels = 184
out_channels = 256
depth = 4
height = width = 10


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=3, padding=0,
                                       output_padding=0, groups=1, bias=True,
                                       dilation=1, dtype=torch.float32)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width, dtype=torch.float32)]


def get_init_inputs():
    return [in_channels, out_channels]
