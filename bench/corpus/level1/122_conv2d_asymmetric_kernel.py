"""2D convolution with an asymmetric (3, 7) kernel on a non-square input."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 32
out_channels = 64
kernel_size = (3, 7)
height = 128
width = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=(1, 3))

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
