"""Rotary position embedding applied to q and k (rotate-half form, cached cos/sin buffers), then causal SDPA in bf16."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
n_heads = 32
seq_len = 2048
head_dim = 128


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, head_dim, max_len, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        t = torch.arange(max_len).float()
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(torch.bfloat16))
        self.register_buffer("sin_cached", emb.sin().to(torch.bfloat16))

    def forward(self, q, k, v):
        T = q.shape[-2]
        cos, sin = self.cos_cached[:T], self.sin_cached[:T]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch, n_heads, seq_len, head_dim)
    return [torch.randn(shape, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return [head_dim, seq_len]
