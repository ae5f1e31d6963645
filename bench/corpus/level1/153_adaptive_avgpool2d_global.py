"""Global average pooling with AdaptiveAvgPool2d(1) followed by flatten."""

import torch
import torch.nn as nn

batch_size = 256
channels = 2048
height = width = 7


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gap = nn.AdaptiveAvgPool2d((1, 1))

    def forward(self, features):
        return torch.flatten(self.gap(features), 1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
