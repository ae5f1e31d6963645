"""bfloat16 projection, RMSNorm by hand in float32, SiLU, back to bfloat16."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
seq = 1024
d_in = 2048
d_out = 2048


class Model(nn.Module):
    def __init__(self, d_in, d_out, eps=1e-6):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out, bias=False, dtype=torch.bfloat16)
        self.weight = nn.Parameter(torch.ones(d_out, dtype=torch.bfloat16))
        self.eps = eps

    def forward(self, x):
        h = self.proj(x).float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return F.silu(h * self.weight.float()).to(torch.bfloat16)


def get_inputs():
    return [torch.randn(batch, seq, d_in, dtype=torch.bfloat16)]


def get_init_inputs():
    return [d_in, d_out]
