"""Transposed 3D convolution, kernel 3, stride 2, padding 1, output_padding 1."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.decoder_up = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=3, stride=2, padding=1,
                                                   output_padding=1)

    def forward(self, x):
        return self.decoder_up(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
