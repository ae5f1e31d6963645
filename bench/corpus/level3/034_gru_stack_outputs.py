"""Three-layer GRU (sequence-first); returns the full output sequence of the top layer."""

import torch
import torch.nn as nn

seq_len = 256
batch_size = 32
input_size = 128
hidden_size = 384
num_layers = 3


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias=True, batch_first=False, dropout=0.0)

    def forward(self, x, h0):
        output, h_n = self.gru(x, h0)
        return output


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size), torch.zeros(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
