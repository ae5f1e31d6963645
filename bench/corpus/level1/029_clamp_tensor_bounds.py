"""Clamps each column into per-column bounds given as tensors."""

import torch
import torch.nn as nn

batch_size = 8192
num_features = 2048


class Model(nn.Module):
    def forward(self, x, lower, upper):
        return torch.clamp(x, lower, upper)


def get_inputs():
    lower = -torch.rand(num_features) - 0.1
    upper = torch.rand(num_features) + 0.1
    return [torch.randn(batch_size, num_features), lower, upper]


def get_init_inputs():
    return []
