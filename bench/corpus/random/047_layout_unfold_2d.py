"""Sliding windows (size 8, step 8) via Tensor.unfold (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch_size = 64
dim = 16384


class Model(nn.Module):
    def forward(self, x):
        return x.unfold(1, 8, 8).contiguous()


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float16)]


def get_init_inputs():
    return []
