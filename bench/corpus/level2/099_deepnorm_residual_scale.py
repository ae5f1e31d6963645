"""Scaled residual post-norm: LayerNorm(alpha * x + f(x)) where f is a ReLU MLP (deep-transformer stabilisation)."""

import torch
import torch.nn as nn

batch = 32
seq = 256
d_model = 768
num_layers = 48


class Model(nn.Module):
    def __init__(self, d_model, num_layers):
        super().__init__()
        self.alpha = (2 * num_layers) ** 0.25
        self.ffn = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(self.alpha * x + self.ffn(x))


def get_inputs():
    return [torch.randn(batch, seq, d_model)]


def get_init_inputs():
    return [d_model, num_layers]
