"""Causal attention with ALiBi linear position biases (per-head slopes) added to the scores before softmax."""

import math

import torch
import torch.nn as nn

batch = 8
heads = 16
seq = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, heads, seq):
        super().__init__()
        slopes = torch.tensor([2 ** (-8.0 * (i + 1) / heads) for i in range(heads)])
        pos = torch.arange(seq)
        rel = (pos[None, :] - pos[:, None]).clamp(max=0).float()
        self.register_buffer("alibi", slopes[:, None, None] * rel[None])
        self.register_buffer("causal", torch.ones(seq, seq, dtype=torch.bool).tril())

    def forward(self, q, k, v):
        T = q.size(2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + self.alibi[:, :T, :T]
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim) for _ in range(3)]


def get_init_inputs():
    return [heads, seq]
