"""C-style floating modulus of a tensor by a positive tensor (torch.fmod)."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 4096


class Model(nn.Module):
    def forward(self, a, b):
        return torch.fmod(a, b)


def get_inputs():
    return [torch.randn(batch_size, dim) * 10, torch.rand(batch_size, dim) * 3 + 0.5]


def get_init_inputs():
    return []
