"""Matmul where the batch dimensions broadcast: (B, 1, M, K) @ (1, H, K, N)."""

import torch
import torch.nn as nn

batch_size = 32
heads = 16
M = 256
K = 64
N = 256


class Model(nn.Module):
    def forward(self, x, w):
        return x @ w


def get_inputs():
    return [torch.randn(batch_size, 1, M, K), torch.randn(1, heads, K, N)]


def get_init_inputs():
    return []
