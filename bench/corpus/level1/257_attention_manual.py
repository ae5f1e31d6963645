"""Hand-written attention softmax(Q K^T / sqrt(d)) V."""

import math

import torch
import torch.nn as nn

batch_size = 16
n_head = 12
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def forward(self, q, k, v):
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = torch.softmax(att, dim=-1)
        return att @ v


def get_inputs():
    return [torch.randn(batch_size, n_head, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
