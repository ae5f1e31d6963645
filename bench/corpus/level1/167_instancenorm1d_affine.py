"""InstanceNorm1d with learned affine parameters over (batch, channels, length)."""

import torch
import torch.nn as nn

batch_size = 128
channels = 128
length = 4096


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm1d(channels, affine=True)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]
