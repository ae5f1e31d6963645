"""LayerNorm over the hidden dimension of a (batch, seq, hidden) tensor."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 1024
hidden_size = 4096


class Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.ln = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states):
        return self.ln(hidden_states)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size]
