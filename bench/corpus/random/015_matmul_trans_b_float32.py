"""A @ B.T with float32 operands (random spec, seed 2026)."""

import torch
import torch.nn as nn

M = 128
K = 2242
N = 1024


class Model(nn.Module):
    def forward(self, A, B):
        return A @ B.T


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float32), torch.randn(N, K, dtype=torch.float32)]


def get_init_inputs():
    return []
