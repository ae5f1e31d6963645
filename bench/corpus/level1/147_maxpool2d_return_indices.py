"""2D max pooling returning both pooled values and argmax indices."""

import torch
import torch.nn as nn

batch_size = 16
channels = 128
height = width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, stride=2, return_indices=True)

    def forward(self, x):
        out, indices = self.pool(x)
        return out, indices


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
