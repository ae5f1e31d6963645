"""Bidirectional 2-layer LSTM with explicit zero initial states; returns the final hidden states h_n of every layer and direction."""

import torch
import torch.nn as nn

batch = 32
seq_len = 128
input_dim = 256
hidden_dim = 256
layers = 2


class Model(nn.Module):
    def __init__(self, input_dim, hidden_dim, layers):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.layers = layers
        self.rnn = nn.LSTM(input_dim, hidden_dim, num_layers=layers, bidirectional=True)

    def forward(self, x):
        h0 = torch.zeros(self.layers * 2, x.size(1), self.hidden_dim, device=x.device, dtype=x.dtype)
        c0 = torch.zeros_like(h0)
        _, (h_n, _) = self.rnn(x, (h0, c0))
        return h_n


def get_inputs():
    return [torch.randn(seq_len, batch, input_dim)]


def get_init_inputs():
    return [input_dim, hidden_dim, layers]
