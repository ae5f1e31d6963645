"""Super-resolution upsampling: Conv2d to 4x channels, PixelShuffle(2), PReLU."""

import torch
import torch.nn as nn

batch_size = 16
channels = 64
lr_height = 96
lr_width = 96


class Model(nn.Module):
    def __init__(self, channels, scale=2):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels * scale ** 2, kernel_size=3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)
        self.prelu = nn.PReLU()

    def forward(self, x):
        return self.prelu(self.shuffle(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, lr_height, lr_width)]


def get_init_inputs():
    return [channels]
