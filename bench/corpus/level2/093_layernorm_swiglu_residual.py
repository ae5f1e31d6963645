"""Pre-norm SwiGLU block: LayerNorm, gate and up projections, SiLU(gate) * up, down projection, residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 16384
dim = 1024
hidden = 2816


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, hidden]
