"""Raises every element to a fixed integer power."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.exponent = exponent

    def forward(self, x):
        return x ** self.exponent


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [3]
