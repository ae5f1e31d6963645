"""Mish activation x * tanh(softplus(x)) in bfloat16."""

import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = width = 56


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mish = nn.Mish()

    def forward(self, x):
        return self.mish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
