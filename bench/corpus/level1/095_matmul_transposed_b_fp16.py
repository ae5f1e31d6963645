"""Half-precision matrix product with the second operand transposed: A @ B.T."""

import torch
import torch.nn as nn

M = 8192
K = 4096
N = 2048


class Model(nn.Module):
    def forward(self, A, B):
        return A @ B.T


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(N, K, dtype=torch.float16)]


def get_init_inputs():
    return []
