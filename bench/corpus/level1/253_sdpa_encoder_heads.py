"""Unmasked scaled dot-product attention over encoder heads (F.scaled_dot_product_attention)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 48
heads = 12
tokens = 577
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(batch, heads, tokens, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
