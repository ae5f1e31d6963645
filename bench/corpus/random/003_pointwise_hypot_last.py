"""Elementwise hypot of two float16 tensors (b broadcast over leading dims) (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 2320
dim = 15920


class Model(nn.Module):
    def forward(self, a, b):
        return torch.hypot(a, b)


def get_inputs():
    a = torch.randn(batch_size, dim, dtype=torch.float16)
    b = torch.randn(1, dim, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []
