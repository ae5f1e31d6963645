"""Attention written with bmm on (batch*heads, seq, dim) tensors, scores scaled before softmax."""

import torch
import torch.nn as nn

batch_heads = 512
seq_len = 512
d_k = 64


class Model(nn.Module):
    def __init__(self, d_k):
        super().__init__()
        self.scale = d_k ** -0.5

    def forward(self, query, key, value):
        scores = torch.bmm(query, key.transpose(1, 2)) * self.scale
        probs = torch.softmax(scores, dim=-1)
        return torch.bmm(probs, value)


def get_inputs():
    return [torch.randn(batch_heads, seq_len, d_k), torch.randn(batch_heads, seq_len, d_k), torch.randn(batch_heads, seq_len, d_k)]


def get_init_inputs():
    return [d_k]
