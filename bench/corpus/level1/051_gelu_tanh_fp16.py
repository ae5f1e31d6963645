"""GELU activation, tanh approximation, in half precision."""

import torch
import torch.nn as nn

batch_size = 4096
hidden = 4096 * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(batch_size, hidden).half()]


def get_init_inputs():
    return []
