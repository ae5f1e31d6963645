"""Pre-norm: LayerNorm, linear, tanh (pooler head on the first token)."""

import torch
import torch.nn as nn

batch_size = 256
seq_len = 512
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token = self.ln(hidden_states[:, 0])
        return self.activation(self.dense(first_token))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size]
