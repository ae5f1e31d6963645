"""Masked-LM head transform: dense, GELU, LayerNorm (eps 1e-12)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
seq_length = 512
hidden_size = 768


class Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)

    def forward(self, hidden_states):
        return self.LayerNorm(F.gelu(self.dense(hidden_states)))


def get_inputs():
    return [torch.randn(batch_size, seq_length, hidden_size)]


def get_init_inputs():
    return [hidden_size]
