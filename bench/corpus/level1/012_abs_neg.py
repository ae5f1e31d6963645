"""Negated absolute value, -|x|, elementwise."""

import torch
import torch.nn as nn

N = 1 << 26


class Model(nn.Module):
    def forward(self, x):
        return -torch.abs(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
