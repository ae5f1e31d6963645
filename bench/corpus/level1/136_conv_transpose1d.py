"""Transposed 1D convolution upsampling by 4 (kernel 8, stride 4, padding 2)."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
length = 2048


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose1d(in_channels, out_channels, kernel_size=8, stride=4, padding=2)

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]
