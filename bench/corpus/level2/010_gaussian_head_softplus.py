"""Probabilistic regression head: one linear gives mean and raw scale; scale = softplus(raw) + 1e-4."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
hidden = 512
targets = 64


class Model(nn.Module):
    def __init__(self, hidden, targets):
        super().__init__()
        self.out = nn.Linear(hidden, 2 * targets)

    def forward(self, h):
        mean, raw_scale = self.out(h).chunk(2, dim=-1)
        return mean, F.softplus(raw_scale) + 1e-4


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, targets]
