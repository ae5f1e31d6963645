"""Angle of 2D points via atan2(y, x)."""

import torch
import torch.nn as nn

num_points = 64 * 1024 * 1024


class Model(nn.Module):
    def forward(self, y, x):
        return torch.atan2(y, x)


def get_inputs():
    return [torch.randn(num_points), torch.randn(num_points)]


def get_init_inputs():
    return []
