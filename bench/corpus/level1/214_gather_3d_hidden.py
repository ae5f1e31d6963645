"""Gathers the last valid token's hidden state per sequence using lengths and torch.gather."""

import torch
import torch.nn as nn

batch_size = 512
seq_len = 1024
hidden_size = 1024


class Model(nn.Module):
    def forward(self, hidden_states, lengths):
        index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, hidden_states.size(-1))
        return hidden_states.gather(1, index).squeeze(1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size), torch.randint(1, seq_len + 1, (batch_size,))]


def get_init_inputs():
    return []
