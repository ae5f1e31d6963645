"""Raises the absolute value of a half tensor to a fractional scalar power (|x|^0.75)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        return x.abs().pow(0.75)


def get_inputs():
    return [torch.randn(batch_size, dim).half()]


def get_init_inputs():
    return []
