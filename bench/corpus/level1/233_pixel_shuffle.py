"""Pixel shuffle (depth to space) with upscale factor 2."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = width = 64
upscale = 2


class Model(nn.Module):
    def __init__(self, upscale):
        super().__init__()
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):
        return self.shuffle(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [upscale]
