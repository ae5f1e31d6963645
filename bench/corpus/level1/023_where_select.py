"""Selects from two tensors with torch.where on a boolean condition tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def forward(self, cond, x, y):
        return torch.where(cond, x, y)


def get_inputs():
    cond = torch.rand(batch_size, dim) > 0.3
    return [cond, torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
