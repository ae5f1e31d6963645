"""Slices a window of columns with narrow and a strided slice of rows, made contiguous."""

import torch
import torch.nn as nn

rows = 16384
cols = 4096
start = 1000
length = 2048


class Model(nn.Module):
    def __init__(self, start, length):
        super().__init__()
        self.start = start
        self.length = length

    def forward(self, x):
        return torch.narrow(x, 1, self.start, self.length)[::2].contiguous()


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [start, length]
