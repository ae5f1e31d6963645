"""torch.split into uneven sizes along dim 1, returning the pieces in reverse order concatenated."""

import torch
import torch.nn as nn

batch_size = 8192
split_sizes = [100, 412, 1000, 536]


class Model(nn.Module):
    def __init__(self, split_sizes):
        super().__init__()
        self.split_sizes = split_sizes

    def forward(self, x):
        parts = torch.split(x, self.split_sizes, dim=1)
        return torch.cat(parts[::-1], dim=1)


def get_inputs():
    return [torch.randn(batch_size, sum(split_sizes))]


def get_init_inputs():
    return [split_sizes]
