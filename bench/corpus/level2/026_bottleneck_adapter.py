"""Bottleneck adapter: LayerNorm, down-projection, ReLU, up-projection, residual add."""

import torch
import torch.nn as nn

batch = 32
seq = 512
d_model = 1024
bottleneck = 64


class Model(nn.Module):
    def __init__(self, d_model, bottleneck):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.down = nn.Linear(d_model, bottleneck)
        self.up = nn.Linear(bottleneck, d_model)

    def forward(self, x):
        return x + self.up(torch.relu(self.down(self.norm(x))))


def get_inputs():
    return [torch.randn(batch, seq, d_model)]


def get_init_inputs():
    return [d_model, bottleneck]
