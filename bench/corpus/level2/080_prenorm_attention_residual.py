"""Pre-norm attention with residual: LayerNorm, Q/K/V projections, softmax(QK^T/sqrt(d))V by hand, output projection, add."""

import math

import torch
import torch.nn as nn

batch = 16
tokens = 256
dim = 768
heads = 12


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        h = self.norm(x)
        q, k, v = (t(h).view(b, n, self.heads, -1).transpose(1, 2) for t in (self.to_q, self.to_k, self.to_v))
        attn = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, d)
        return x + self.to_out(out)


def get_inputs():
    return [torch.randn(batch, tokens, dim)]


def get_init_inputs():
    return [dim, heads]
