"""Computes x + value * t1 * t2 with torch.addcmul."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x, t1, t2):
        return torch.addcmul(x, t1, t2, value=self.value)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [0.5]
