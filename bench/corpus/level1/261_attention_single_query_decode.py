"""Decode-step attention: one new query per sequence against a cached key/value history."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
num_heads = 32
cache_len = 2048
head_dim = 128


class Model(nn.Module):
    def forward(self, q, k_cache, v_cache):
        return F.scaled_dot_product_attention(q, k_cache, v_cache)


def get_inputs():
    q = torch.randn(batch_size, num_heads, 1, head_dim, dtype=torch.float16)
    k_cache = torch.randn(batch_size, num_heads, cache_len, head_dim, dtype=torch.float16)
    v_cache = torch.randn(batch_size, num_heads, cache_len, head_dim, dtype=torch.float16)
    return [q, k_cache, v_cache]


def get_init_inputs():
    return []
