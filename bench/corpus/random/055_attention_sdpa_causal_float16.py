"""scaled_dot_product_attention with is_causal=True, float16 (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
num_heads = 8
seq_len = 995
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float16)]


def get_init_inputs():
    return []
