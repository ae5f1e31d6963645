"""Splits the last dimension into q, k, v chunks and returns them permuted to (batch, heads, seq, dim)."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
n_heads = 16
head_dim = 64


class Model(nn.Module):
    def __init__(self, n_heads):
        super().__init__()
        self.n_heads = n_heads

    def forward(self, qkv):
        B, T, C3 = qkv.shape
        q, k, v = qkv.split(C3 // 3, dim=2)
        q = q.view(B, T, self.n_heads, -1).transpose(1, 2)
        k = k.view(B, T, self.n_heads, -1).transpose(1, 2)
        v = v.view(B, T, self.n_heads, -1).transpose(1, 2)
        return q, k, v


def get_inputs():
    return [torch.randn(batch_size, seq_len, 3 * n_heads * head_dim)]


def get_init_inputs():
    return [n_heads]
