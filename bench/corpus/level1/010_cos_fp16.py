"""Elementwise cosine of a half-precision matrix."""

import torch
import torch.nn as nn

rows = 8192
cols = 4096


class Model(nn.Module):
    def forward(self, x):
        return x.cos()


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
