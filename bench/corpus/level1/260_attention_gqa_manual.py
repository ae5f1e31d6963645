"""Grouped-query attention by hand: 32 query heads share 8 key/value heads (repeat_interleave), causal."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 32
num_kv_heads = 8
seq_len = 1024
head_dim = 128


class Model(nn.Module):
    def __init__(self, num_heads, num_kv_heads):
        super().__init__()
        self.n_rep = num_heads // num_kv_heads

    def forward(self, q, k, v):
        k = k.repeat_interleave(self.n_rep, dim=1)
        v = v.repeat_interleave(self.n_rep, dim=1)
        T = q.size(2)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.size(-1))
        causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        return torch.matmul(F.softmax(scores.float(), dim=-1).to(q.dtype), v)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)
    k = torch.randn(batch_size, num_kv_heads, seq_len, head_dim, dtype=torch.bfloat16)
    v = torch.randn(batch_size, num_kv_heads, seq_len, head_dim, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return [num_heads, num_kv_heads]
