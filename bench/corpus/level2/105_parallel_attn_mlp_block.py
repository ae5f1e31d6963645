"""Parallel transformer block: one LayerNorm feeds both causal attention and a GELU MLP; both added to the residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
seq = 1024
d_model = 1024
heads = 16


class Model(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attn_out = nn.Linear(d_model, d_model)
        self.fc_in = nn.Linear(d_model, 4 * d_model)
        self.fc_out = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        h = self.ln(x)
        q, k, v = self.qkv(h).view(B, T, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        m = self.fc_out(F.gelu(self.fc_in(h), approximate="tanh"))
        return x + self.attn_out(a) + m


def get_inputs():
    return [torch.randn(batch, seq, d_model)]


def get_init_inputs():
    return [d_model, heads]
