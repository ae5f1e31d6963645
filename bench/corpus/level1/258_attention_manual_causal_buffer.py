"""Hand-written causal attention: the mask is a registered buffer sliced to the sequence length."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
n_head = 16
max_seqlen = 2048
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, max_seqlen):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return att @ v


def get_inputs():
    return [torch.randn(batch_size, n_head, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return [max_seqlen]
