"""Residual branch with LayerNorm, MLP (GELU), per-channel layer scale; drop-path is the identity in eval."""

import torch
import torch.nn as nn

batch_size = 128
num_tokens = 197
embed_dim = 384


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.training and self.p > 0.0:
            keep = torch.rand(x.shape[0], 1, 1, device=x.device) >= self.p
            return x * keep / (1 - self.p)
        return x


class Model(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(embed_dim, 4 * embed_dim), nn.GELU(), nn.Linear(4 * embed_dim, embed_dim))
        self.ls = nn.Parameter(1e-5 * torch.ones(embed_dim))
        self.drop_path = DropPath(0.1)

    def forward(self, x):
        return x + self.drop_path(self.ls * self.mlp(self.norm(x)))


def get_inputs():
    return [torch.randn(batch_size, num_tokens, embed_dim)]


def get_init_inputs():
    return [embed_dim]
