"""Materialised transpose of dims 0 and 1 (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 1504
dim = 4096


class Model(nn.Module):
    def forward(self, x):
        return x.transpose(0, 1).contiguous()


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32)]


def get_init_inputs():
    return []
