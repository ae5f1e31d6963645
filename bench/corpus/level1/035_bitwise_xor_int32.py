"""Bitwise XOR of two int32 matrices."""

import torch
import torch.nn as nn

rows = 8192
cols = 4096


class Model(nn.Module):
    def forward(self, x, y):
        return x ^ y


def get_inputs():
    x = torch.randint(-2**31, 2**31 - 1, (rows, cols), dtype=torch.int32)
    y = torch.randint(-2**31, 2**31 - 1, (rows, cols), dtype=torch.int32)
    return [x, y]


def get_init_inputs():
    return []
