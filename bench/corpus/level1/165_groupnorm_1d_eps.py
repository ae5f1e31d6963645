"""GroupNorm with 8 groups on a (batch, channels, length) sequence, eps 1e-6."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 512
length = 1024
groups = 8


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.ones(channels) + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))

    def forward(self, x):
        return F.group_norm(x, self.groups, self.weight, self.bias, eps=1e-6)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 2 + 1]


def get_init_inputs():
    return [channels, groups]
