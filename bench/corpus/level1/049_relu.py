"""ReLU activation on a batch of convolutional feature maps."""

import torch
import torch.nn as nn

batch_size = 128
channels = 256
height = width = 56


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
