"""Adaptive LayerNorm: SiLU(cond) -> Linear to shift and scale, LayerNorm without affine, x*(1+scale)+shift."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32
tokens = 1024
hidden = 1152


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.ada = nn.Linear(hidden, 2 * hidden)

    def forward(self, x, cond):
        shift, scale = self.ada(F.silu(cond)).chunk(2, dim=-1)
        return self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def get_inputs():
    return [torch.randn(batch, tokens, hidden), torch.randn(batch, hidden)]


def get_init_inputs():
    return [hidden]
