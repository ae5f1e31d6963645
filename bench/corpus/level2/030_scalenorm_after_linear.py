"""Linear projection followed by ScaleNorm: g * x / max(||x||, eps) with a single learned gain."""

import torch
import torch.nn as nn

batch = 64
seq = 512
d_in = 1024
d_out = 1024


class Model(nn.Module):
    def __init__(self, d_in, d_out, eps=1e-5):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out)
        self.g = nn.Parameter(torch.tensor(d_out ** 0.5))
        self.eps = eps

    def forward(self, x):
        h = self.proj(x)
        norm = torch.linalg.vector_norm(h, dim=-1, keepdim=True).clamp(min=self.eps)
        return self.g * h / norm


def get_inputs():
    return [torch.randn(batch, seq, d_in)]


def get_init_inputs():
    return [d_in, d_out]
