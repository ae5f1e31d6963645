"""hardswish activation on a 2D float32 tensor (random spec, seed 2026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
dim = 11576


class Model(nn.Module):
    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32) * 3]


def get_init_inputs():
    return []
