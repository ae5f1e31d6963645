"""Cross-attention with different query and key lengths and an additive float bias, bf16."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_heads = 16
q_len = 512
kv_len = 1536
head_dim = 64


class Model(nn.Module):
    def forward(self, query, key, value, bias):
        return F.scaled_dot_product_attention(query, key, value, attn_mask=bias)


def get_inputs():
    query = torch.randn(batch_size, num_heads, q_len, head_dim, dtype=torch.bfloat16)
    key = torch.randn(batch_size, num_heads, kv_len, head_dim, dtype=torch.bfloat16)
    value = torch.randn(batch_size, num_heads, kv_len, head_dim, dtype=torch.bfloat16)
    bias = torch.randn(1, num_heads, q_len, kv_len, dtype=torch.bfloat16)
    return [query, key, value, bias]


def get_init_inputs():
    return []
