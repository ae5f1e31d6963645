"""Broadcasting matmul: a (batch, heads, seq, head_dim) tensor times one (head_dim, rank) matrix shared by all heads."""

import torch
import torch.nn as nn

batch = 16
heads = 16
seq = 1024
head_dim = 128
rank = 32


class Model(nn.Module):
    def __init__(self, head_dim, rank):
        super().__init__()
        self.down = nn.Parameter(torch.randn(head_dim, rank) / head_dim ** 0.5)

    def forward(self, k):
        return torch.matmul(k, self.down)


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim)]


def get_init_inputs():
    return [head_dim, rank]
