"""Euclidean (p=2) norm of every row."""

import torch
import torch.nn as nn

batch_size = 16384
dim = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
