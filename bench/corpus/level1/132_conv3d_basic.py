"""3D convolution with a 3x3x3 kernel and padding 1 over video clips."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
depth = 16
height = width = 112


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.spatiotemporal = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return self.spatiotemporal(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
