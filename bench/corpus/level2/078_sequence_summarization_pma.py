"""Sequence summarization: learned seed queries attend over an event sequence (softmax(QK^T)V), LayerNorm on the result."""

import torch
import torch.nn as nn

batch_size = 1024
seq_len = 512
dim = 256
num_seeds = 4


class Model(nn.Module):
    def __init__(self, dim, num_seeds):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(num_seeds, dim) * 0.02)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, events):
        k = self.k_proj(events)
        v = self.v_proj(events)
        scores = torch.einsum("sd,bld->bsl", self.seeds, k) / k.size(-1) ** 0.5
        pooled = torch.softmax(scores, dim=-1) @ v
        return self.norm(pooled + self.seeds)


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, num_seeds]
