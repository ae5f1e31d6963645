"""Interacting layer over field embeddings: multi-head self-attention across fields, residual projection, ReLU."""

import torch
import torch.nn as nn

batch_size = 4096
num_fields = 39
embed_dim = 64
num_heads = 2


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_res = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, e):
        B, F_, D = e.shape
        q = self.W_q(e).view(B, F_, self.h, -1).transpose(1, 2)
        k = self.W_k(e).view(B, F_, self.h, -1).transpose(1, 2)
        v = self.W_v(e).view(B, F_, self.h, -1).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        out = (att @ v).transpose(1, 2).reshape(B, F_, D)
        return torch.relu(out + self.W_res(e))


def get_inputs():
    return [torch.randn(batch_size, num_fields, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
