"""Scatters source values into a zero tensor at a permutation of column positions (dim 1)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def forward(self, src, index):
        out = torch.zeros_like(src)
        return out.scatter(1, index, src)


def get_inputs():
    src = torch.randn(batch_size, dim)
    index = torch.argsort(torch.rand(batch_size, dim), dim=1)
    return [src, index]


def get_init_inputs():
    return []
