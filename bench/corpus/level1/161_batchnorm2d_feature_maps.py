"""BatchNorm2d (inference statistics) over backbone feature maps."""

import torch
import torch.nn as nn

batch = 64
channels = 256
h = 56
w = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.BatchNorm2d(channels, eps=1e-3)

    def forward(self, fmap):
        return self.norm(fmap)


def get_inputs():
    return [torch.randn(batch, channels, h, w) * 2 + 0.5]


def get_init_inputs():
    return [channels]
