"""Elementwise div of two float32 tensors (b broadcast over leading dims) (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 1024


class Model(nn.Module):
    def forward(self, a, b):
        return a / b


def get_inputs():
    a = torch.randn(batch_size, dim, dtype=torch.float32)
    b = (torch.randn(1, dim).sign() * (torch.rand(1, dim) + 0.5)).to(torch.float32)
    return [a, b]


def get_init_inputs():
    return []
