"""Output projection to an odd-sized vocabulary: (3000 x 1536) hidden states times a (1536 x 50257) matrix."""

import torch
import torch.nn as nn

num_positions = 3000
hidden = 1536
vocab = 50257


class Model(nn.Module):
    def forward(self, hidden_states, unembed):
        return torch.matmul(hidden_states, unembed)


def get_inputs():
    return [torch.randn(num_positions, hidden), torch.randn(hidden, vocab) * 0.02]


def get_init_inputs():
    return []
