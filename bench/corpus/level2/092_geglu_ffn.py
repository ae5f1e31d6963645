"""GEGLU feed-forward: one projection to 2*d_ff, split, GELU(gate) * value, dropout (eval), down projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
seq = 1024
d_model = 1024
d_ff = 2816


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.proj_in = nn.Linear(d_model, 2 * d_ff)
        self.dropout = nn.Dropout(0.0)
        self.proj_out = nn.Linear(d_ff, d_model)

    def forward(self, x):
        value, gate = self.proj_in(x).chunk(2, dim=-1)
        return self.proj_out(self.dropout(value * F.gelu(gate)))


def get_inputs():
    return [torch.randn(batch, seq, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
