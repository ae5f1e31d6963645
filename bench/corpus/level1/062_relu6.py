"""ReLU6 activation min(max(x, 0), 6)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 144
height = width = 56


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6()

    def forward(self, x):
        return self.relu6(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 5]


def get_init_inputs():
    return []
