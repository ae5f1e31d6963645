"""Three-layer LSTM continuing from given (h0, c0) states; returns the final cell states c_n."""

import torch
import torch.nn as nn

batch_size = 128
seq_len = 128
input_size = 64
hidden_size = 256
num_layers = 3


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)

    def forward(self, x, h0, c0):
        _, (h_n, c_n) = self.lstm(x, (h0, c0))
        return c_n


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    h0 = torch.randn(num_layers, batch_size, hidden_size) * 0.1
    c0 = torch.randn(num_layers, batch_size, hidden_size) * 0.1
    return [x, h0, c0]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
