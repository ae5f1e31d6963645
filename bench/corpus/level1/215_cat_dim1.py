"""Concatenates three feature blocks of different widths along dim 1."""

import torch
import torch.nn as nn

batch_size = 16384
dense_dim = 512
sparse_dim = 1024
extra_dim = 256


class Model(nn.Module):
    def forward(self, dense, sparse, extra):
        return torch.cat([dense, sparse, extra], dim=1)


def get_inputs():
    return [torch.randn(batch_size, dense_dim), torch.randn(batch_size, sparse_dim), torch.randn(batch_size, extra_dim)]


def get_init_inputs():
    return []
