"""Causal sliding-window attention: scores masked outside a 256-token band below the diagonal, softmax, times V (bf16)."""

import torch
import torch.nn as nn

batch = 4
heads = 16
seq_len = 2048
head_dim = 64
window = 256


class Model(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window

    def forward(self, q, k, v):
        T = q.size(-2)
        i = torch.arange(T, device=q.device)
        band = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < self.window)
        scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
        scores = scores.masked_fill(~band, float("-inf"))
        return torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)


def get_inputs():
    return [torch.randn(batch, heads, seq_len, head_dim, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return [window]
