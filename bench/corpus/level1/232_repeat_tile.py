"""Tiles a tensor with Tensor.repeat (2x along rows, 3x along columns)."""

import torch
import torch.nn as nn

rows = 4096
cols = 2048


class Model(nn.Module):
    def forward(self, x):
        return x.repeat(2, 3)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
