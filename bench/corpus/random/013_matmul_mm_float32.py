"""A @ B with float32 operands (random spec, seed 2026)."""

import torch
import torch.nn as nn

M = 4096
K = 6237
N = 4464


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float32), torch.randn(K, N, dtype=torch.float32)]


def get_init_inputs():
    return []
