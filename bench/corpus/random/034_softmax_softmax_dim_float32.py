"""softmax over dim of a 2D float32 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1763
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32) * 1]


def get_init_inputs():
    return []
