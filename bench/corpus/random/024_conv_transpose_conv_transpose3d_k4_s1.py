"""nn.ConvTranspose3d kernel 4, stride 1, padding 1, output_padding 0, dilation 1, groups 2, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 19
in_channels = 464
out_channels = 32
depth = 8
height = 16
width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=1, padding=1,
                                       output_padding=0, groups=2, bias=False,
                                       dilation=1, dtype=torch.float32)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width, dtype=torch.float32)]


def get_init_inputs():
    return [in_channels, out_channels]
