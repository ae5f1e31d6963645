"""Bidirectional 2-layer GRU (batch_first); returns both the output sequence and h_n."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 128
input_size = 256
hidden_size = 256


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=2):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=num_layers, batch_first=True, bidirectional=True)

    def forward(self, x):
        output, h_n = self.gru(x)
        return output, h_n


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
