"""Elementwise reciprocal 1/x of values bounded away from zero."""

import torch
import torch.nn as nn

batch_size = 512
dim = 32768


class Model(nn.Module):
    def forward(self, x):
        return torch.reciprocal(x)


def get_inputs():
    sign = torch.where(torch.rand(batch_size, dim) > 0.5, 1.0, -1.0)
    return [sign * (torch.rand(batch_size, dim) + 0.25)]


def get_init_inputs():
    return []
