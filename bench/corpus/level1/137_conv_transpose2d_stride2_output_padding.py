"""Transposed 2D convolution, 3x3 kernel, stride 2, padding 1, output_padding 1 (exact 2x upsample)."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 64
height = width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.upsample = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding)

    def forward(self, x):
        return self.upsample(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 3, 2, 1, 1]
