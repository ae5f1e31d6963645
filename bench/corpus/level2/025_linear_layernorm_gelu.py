"""Projection, LayerNorm, GELU (a projection head)."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
in_dim = 1024
proj_dim = 768


class Model(nn.Module):
    def __init__(self, in_dim, proj_dim):
        super().__init__()
        self.proj = nn.Linear(in_dim, proj_dim)
        self.norm = nn.LayerNorm(proj_dim)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.norm(self.proj(x)))


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_dim)]


def get_init_inputs():
    return [in_dim, proj_dim]
