"""3D average pooling, kernel (2, 3, 3), stride (2, 2, 2), padding (0, 1, 1)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 32
depth = 16
height = width = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d((2, 3, 3), stride=2, padding=(0, 1, 1))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
