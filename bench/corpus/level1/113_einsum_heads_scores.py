"""Per-head score matrix via einsum 'bhqd,bhkd->bhqk'."""

import torch
import torch.nn as nn

batch_size = 16
n_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    q = torch.randn(batch_size, n_heads, seq_len, head_dim)
    k = torch.randn(batch_size, n_heads, seq_len, head_dim)
    return [q, k]


def get_init_inputs():
    return []
