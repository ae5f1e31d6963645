"""scaled_dot_product_attention with a boolean key mask, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
num_heads = 12
seq_len = 512
head_dim = 128


class Model(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float32), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float32), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.float32), torch.rand(batch_size, 1, 1, seq_len) > 0.2]


def get_init_inputs():
    return []
