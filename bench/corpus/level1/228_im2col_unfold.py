"""im2col with nn.Unfold: 3x3 patches, padding 1, stride 2."""

import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=3, padding=1, stride=2)

    def forward(self, x):
        return self.unfold(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
