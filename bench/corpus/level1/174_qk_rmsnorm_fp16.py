"""Per-head RMSNorm of half-precision queries over head_dim (QK-norm), computed in float32 with a learned scale."""

import torch
import torch.nn as nn

batch = 16
n_heads = 16
seq = 2048
head_dim = 128


class Model(nn.Module):
    def __init__(self, head_dim, eps=1e-6):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(head_dim, dtype=torch.float16))
        self.eps = eps

    def forward(self, q):
        qf = q.float()
        qf = qf * torch.rsqrt(qf.square().mean(dim=-1, keepdim=True) + self.eps)
        return qf.to(q.dtype) * self.scale


def get_inputs():
    return [torch.randn(batch, n_heads, seq, head_dim, dtype=torch.float16)]


def get_init_inputs():
    return [head_dim]
