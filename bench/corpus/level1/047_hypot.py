"""Elementwise Euclidean norm sqrt(a^2 + b^2) via torch.hypot on 3D tensors."""

import torch
import torch.nn as nn

batch = 128
seq_len = 1024
dim = 256


class Model(nn.Module):
    def forward(self, a, b):
        return torch.hypot(a, b)


def get_inputs():
    return [torch.randn(batch, seq_len, dim), torch.randn(batch, seq_len, dim)]


def get_init_inputs():
    return []
