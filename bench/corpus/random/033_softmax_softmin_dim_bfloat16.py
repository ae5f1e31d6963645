"""softmin over dim of a 2D bfloat16 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 4380


class Model(nn.Module):
    def forward(self, x):
        return F.softmin(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16) * 1]


def get_init_inputs():
    return []
