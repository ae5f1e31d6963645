"""scaled_dot_product_attention with a boolean key mask, bfloat16 (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_heads = 16
seq_len = 690
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.rand(batch_size, 1, 1, seq_len) > 0.2]


def get_init_inputs():
    return []
