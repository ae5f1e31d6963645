"""softplus activation on a 2D bfloat16 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 16104


class Model(nn.Module):
    def forward(self, x):
        return F.softplus(x, beta=2.0, threshold=5.0)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16) * 3]


def get_init_inputs():
    return []
