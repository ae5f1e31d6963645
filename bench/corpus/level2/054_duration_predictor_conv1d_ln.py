"""Speech duration predictor layer: Conv1d, ReLU, LayerNorm over channels (transpose), Dropout, linear to one value."""

import torch
import torch.nn as nn

batch_size = 64
phonemes = 512
hidden = 384
filter_size = 256


class Model(nn.Module):
    def __init__(self, hidden, filter_size, kernel_size=3):
        super().__init__()
        self.conv = nn.Conv1d(hidden, filter_size, kernel_size, padding=1)
        self.norm = nn.LayerNorm(filter_size)
        self.dropout = nn.Dropout(0.5)
        self.linear = nn.Linear(filter_size, 1)

    def forward(self, encoder_out):
        h = torch.relu(self.conv(encoder_out.transpose(1, 2))).transpose(1, 2)
        h = self.dropout(self.norm(h))
        return self.linear(h).squeeze(-1)


def get_inputs():
    return [torch.randn(batch_size, phonemes, hidden)]


def get_init_inputs():
    return [hidden, filter_size]
