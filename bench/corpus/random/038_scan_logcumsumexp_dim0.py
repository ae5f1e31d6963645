"""Logcumsumexp along batch_size of a 2D tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 77
dim = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, dim=0)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
