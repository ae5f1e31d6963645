"""Matmul of an upper-triangular matrix (taken with triu in the forward) with a dense matrix."""

import torch
import torch.nn as nn

n = 3072
m = 1024


class Model(nn.Module):
    def forward(self, U, X):
        return torch.triu(U) @ X


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, m)]


def get_init_inputs():
    return []
