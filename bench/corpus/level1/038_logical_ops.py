"""Logical combination (a and not b) or c of three boolean masks."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def forward(self, a, b, c):
        return torch.logical_or(torch.logical_and(a, torch.logical_not(b)), c)


def get_inputs():
    return [torch.rand(batch_size, dim) > 0.5, torch.rand(batch_size, dim) > 0.5, torch.rand(batch_size, dim) > 0.9]


def get_init_inputs():
    return []
