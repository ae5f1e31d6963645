"""Multi-query attention in fp16: per-head queries, one shared key/value head from a single projection, output projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 1024
hidden = 2048
num_heads = 16


class Model(nn.Module):
    def __init__(self, hidden, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False, dtype=torch.float16)
        self.kv_proj = nn.Linear(hidden, 2 * self.head_dim, bias=False, dtype=torch.float16)
        self.o_proj = nn.Linear(hidden, hidden, bias=False, dtype=torch.float16)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k, v = self.kv_proj(x).unsqueeze(1).split(self.head_dim, dim=-1)
        k = k.expand(B, self.num_heads, T, self.head_dim)
        v = v.expand(B, self.num_heads, T, self.head_dim)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, -1))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden, num_heads]
