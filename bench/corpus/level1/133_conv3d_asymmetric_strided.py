"""3D convolution with kernel (3, 5, 5), stride (1, 2, 2), padding (1, 2, 2) and dilation 1."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 64
frames = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, video):
        return self.conv(video)


def get_inputs():
    return [torch.randn(batch_size, in_channels, frames, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, (3, 5, 5), (1, 2, 2), (1, 2, 2)]
