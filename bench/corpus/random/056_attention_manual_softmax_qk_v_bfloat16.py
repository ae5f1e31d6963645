"""softmax(QK^T / sqrt(d)) V by hand, bfloat16 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 4
seq_len = 2048
head_dim = 32


class Model(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
