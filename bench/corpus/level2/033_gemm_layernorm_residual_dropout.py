"""Output block: dense, dropout, residual add, LayerNorm (post-norm transformer)."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
intermediate_size = 4096
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, intermediate_size, hidden_size):
        super().__init__()
        self.dense = nn.Linear(intermediate_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dropout(self.dense(hidden_states))
        return self.LayerNorm(hidden_states + input_tensor)


def get_inputs():
    return [torch.randn(batch_size, seq_len, intermediate_size), torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [intermediate_size, hidden_size]
