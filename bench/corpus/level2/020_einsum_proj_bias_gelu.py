"""Per-head projection via einsum, bias add and GELU (tanh)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
seq = 256
heads = 16
head_dim = 64
out_dim = 128


class Model(nn.Module):
    def __init__(self, heads, head_dim, out_dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(heads, head_dim, out_dim) * head_dim ** -0.5)
        self.b = nn.Parameter(torch.zeros(heads, 1, out_dim))

    def forward(self, x):
        y = torch.einsum("bhsd,hde->bhse", x, self.w) + self.b
        return F.gelu(y, approximate="tanh")


def get_inputs():
    return [torch.randn(batch, heads, seq, head_dim)]


def get_init_inputs():
    return [heads, head_dim, out_dim]
