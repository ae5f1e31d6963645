"""Half-precision softmax over the key dimension of (batch, heads, q, k) attention scores."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024


class Model(nn.Module):
    def forward(self, scores):
        return scores.softmax(dim=-1)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, seq_len, dtype=torch.float16) * 4]


def get_init_inputs():
    return []
