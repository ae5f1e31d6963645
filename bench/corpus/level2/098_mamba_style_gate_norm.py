"""Gated RMSNorm: RMS-normalize y * SiLU(z) over the channel dimension with a learned weight (selective-state-space output gate)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
seq_len = 2048
d_inner = 2048


class Model(nn.Module):
    def __init__(self, d_inner, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_inner))
        self.eps = eps

    def forward(self, y, z):
        h = y * F.silu(z)
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch, seq_len, d_inner), torch.randn(batch, seq_len, d_inner)]


def get_init_inputs():
    return [d_inner]
