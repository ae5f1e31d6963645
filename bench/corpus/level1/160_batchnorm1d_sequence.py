"""BatchNorm1d over channels of a (batch, channels, length) sequence with non-default eps and momentum."""

import torch
import torch.nn as nn

batch_size = 64
channels = 256
length = 2048


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.BatchNorm1d(channels, eps=1e-3, momentum=0.01)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]
