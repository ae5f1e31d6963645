"""Hand-written attention with a learned relative-position bias table indexed by (i - j)."""

import torch
import torch.nn as nn

batch_size = 32
num_heads = 8
seq_len = 256
head_dim = 32


class Model(nn.Module):
    def __init__(self, num_heads, seq_len):
        super().__init__()
        self.rel_bias = nn.Parameter(torch.randn(num_heads, 2 * seq_len - 1) * 0.02)
        pos = torch.arange(seq_len)
        self.register_buffer("rel_index", (pos[:, None] - pos[None, :]) + seq_len - 1)

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
        scores = scores + self.rel_bias[:, self.rel_index].unsqueeze(0)
        return torch.matmul(scores.softmax(-1), v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return [num_heads, seq_len]
