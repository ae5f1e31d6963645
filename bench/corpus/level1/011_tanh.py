"""Hyperbolic tangent applied elementwise."""

import torch
import torch.nn as nn

batch_size = 512
seq_len = 256
rnn_hidden = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    x = torch.randn(batch_size, seq_len, rnn_hidden)
    return [x]


def get_init_inputs():
    return []
