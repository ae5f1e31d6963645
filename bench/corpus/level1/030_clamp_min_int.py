"""Clamps an int32 tensor from below at zero (integer ReLU)."""

import torch
import torch.nn as nn

rows = 8192
cols = 8192


class Model(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)


def get_inputs():
    return [torch.randint(-1000, 1000, (rows, cols), dtype=torch.int32)]


def get_init_inputs():
    return []
