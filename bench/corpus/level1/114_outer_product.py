"""Outer product of two vectors."""

import torch
import torch.nn as nn

M = 16384
N = 8192


class Model(nn.Module):
    def forward(self, u, v):
        return torch.outer(u, v)


def get_inputs():
    return [torch.randn(M), torch.randn(N)]


def get_init_inputs():
    return []
