"""Raises a positive base tensor to a per-element exponent tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def forward(self, base, exponent):
        return torch.pow(base, exponent)


def get_inputs():
    return [torch.rand(batch_size, dim) * 4 + 0.1, torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
