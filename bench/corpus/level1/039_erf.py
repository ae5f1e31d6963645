"""Gauss error function applied elementwise."""

import torch
import torch.nn as nn

batch_size = 1024
dim = 32768


class Model(nn.Module):
    def forward(self, x):
        return torch.erf(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2]


def get_init_inputs():
    return []
