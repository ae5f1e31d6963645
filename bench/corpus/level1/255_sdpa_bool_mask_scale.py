"""Scaled dot-product attention with a boolean key-padding mask and an explicit scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
num_heads = 8
seq_len = 256
head_dim = 64


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k, v, attn_mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=self.scale)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size, 1))
    attn_mask = (torch.arange(seq_len).unsqueeze(0) < lengths)[:, None, None, :]
    return [q, k, v, attn_mask]


def get_init_inputs():
    return [0.1]
