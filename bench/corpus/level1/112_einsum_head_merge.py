"""Merges attention heads with an output projection via einsum 'bsnh,nhd->bsd'."""

import torch
import torch.nn as nn

batch = 16
seq = 1024
n_heads = 16
head_dim = 64
d_model = n_heads * head_dim


class Model(nn.Module):
    def __init__(self, n_heads, head_dim, d_model):
        super().__init__()
        self.w_o = nn.Parameter(torch.randn(n_heads, head_dim, d_model) / d_model ** 0.5)

    def forward(self, heads_out):
        return torch.einsum("bsnh,nhd->bsd", heads_out, self.w_o)


def get_inputs():
    return [torch.randn(batch, seq, n_heads, head_dim)]


def get_init_inputs():
    return [n_heads, head_dim, d_model]
