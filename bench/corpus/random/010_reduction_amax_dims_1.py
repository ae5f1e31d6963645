"""amax over (dim) of a 2D tensor, keepdim=False (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 256
dim = 7547


class Model(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=1, keepdim=False)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32)]


def get_init_inputs():
    return []
