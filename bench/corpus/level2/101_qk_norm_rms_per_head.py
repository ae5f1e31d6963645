"""Q/K projections, per-head RMSNorm on each (QK-norm), causal SDPA, in bfloat16."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
seq = 1024
hidden = 2048
heads = 16


class Model(nn.Module):
    def __init__(self, hidden, heads, eps=1e-6):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False, dtype=torch.bfloat16)
        d = hidden // heads
        self.q_weight = nn.Parameter(torch.ones(d, dtype=torch.bfloat16))
        self.k_weight = nn.Parameter(torch.ones(d, dtype=torch.bfloat16))
        self.eps = eps

    def rms(self, t, w):
        tf = t.float()
        return (tf * torch.rsqrt(tf.pow(2).mean(-1, keepdim=True) + self.eps)).to(t.dtype) * w

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, -1).unbind(2)
        q = self.rms(q, self.q_weight).transpose(1, 2)
        k = self.rms(k, self.k_weight).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v.transpose(1, 2), is_causal=True)


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden, heads]
