"""Residual feed-forward in half precision: x + W2 relu(W1 x + b1) + b2."""

import torch
import torch.nn as nn

tokens = 16384
d_model = 1024
d_ff = 4096


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff, dtype=torch.float16)
        self.fc2 = nn.Linear(d_ff, d_model, dtype=torch.float16)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(tokens, d_model).half()]


def get_init_inputs():
    return [d_model, d_ff]
