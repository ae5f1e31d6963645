"""Two-layer LSTM (batch_first) over a sequence; the last time step's output goes through a linear head."""

import torch
import torch.nn as nn

batch_size = 64
sequence_length = 256
input_size = 128
hidden_size = 512
num_layers = 2
output_size = 10


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.1):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
