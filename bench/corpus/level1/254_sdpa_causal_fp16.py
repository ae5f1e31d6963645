"""Causal scaled dot-product attention in half precision (is_causal=True)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
n_heads = 32
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(batch_size, n_heads, seq_len, head_dim, dtype=torch.float16)
    k = torch.randn(batch_size, n_heads, seq_len, head_dim, dtype=torch.float16)
    v = torch.randn(batch_size, n_heads, seq_len, head_dim, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []
