"""Transposed 2D convolution with stride (3, 2), padding (1, 0), output_padding (2, 1)."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 32
height = 48
width = 80


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=(4, 3), stride=(3, 2),
                                         padding=(1, 0), output_padding=(2, 1))

    def forward(self, x):
        return self.conv_t(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
