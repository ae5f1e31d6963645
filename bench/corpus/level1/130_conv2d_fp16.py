"""Half-precision 3x3 convolution, 256 -> 256 channels, on 28x28 feature maps."""

import torch
import torch.nn as nn

batch_size = 128
channels = 256
height = width = 28


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, dtype=torch.float16)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width).half()]


def get_init_inputs():
    return [channels]
