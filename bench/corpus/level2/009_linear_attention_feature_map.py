"""Linear-attention feature map: key projection, ELU + 1 (positive features), then K^T V summary per batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32
seq_len = 2048
d_model = 512
d_head = 64


class Model(nn.Module):
    def __init__(self, d_model, d_head):
        super().__init__()
        self.k_proj = nn.Linear(d_model, d_head)
        self.v_proj = nn.Linear(d_model, d_head)

    def forward(self, x):
        phi_k = F.elu(self.k_proj(x)) + 1.0
        v = self.v_proj(x)
        return torch.einsum("bsd,bse->bde", phi_k, v)


def get_inputs():
    return [torch.randn(batch, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_head]
