"""Channel shuffle with 4 groups: view, transpose and flatten channels back (ShuffleNet)."""

import torch
import torch.nn as nn

batch_size = 64
channels = 232
height = width = 28
groups = 4


class Model(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.view(b, self.groups, c // self.groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(b, -1, h, w)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups]
