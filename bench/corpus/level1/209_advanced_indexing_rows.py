"""Advanced indexing x[batch_idx, token_idx]: picks one token vector per (row, position) pair."""

import torch
import torch.nn as nn

batch_size = 256
seq_len = 2048
hidden = 1024
num_picks = 64


class Model(nn.Module):
    def forward(self, hidden_states, positions):
        batch_idx = torch.arange(hidden_states.size(0), device=positions.device).unsqueeze(1)
        return hidden_states[batch_idx, positions]


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randint(0, seq_len, (batch_size, num_picks))]


def get_init_inputs():
    return []
