"""3x3 convolutions with reflect and circular padding modes, results added."""

import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.reflect = nn.Conv2d(channels, channels, 3, padding=1, padding_mode="reflect")
        self.circular = nn.Conv2d(channels, channels, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        return self.reflect(x) + self.circular(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
