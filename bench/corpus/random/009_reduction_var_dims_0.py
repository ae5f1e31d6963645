"""var over (batch_size) of a 2D tensor, keepdim=True (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 512
dim = 11423


class Model(nn.Module):
    def forward(self, x):
        return torch.var(x, dim=0, correction=0, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32)]


def get_init_inputs():
    return []
