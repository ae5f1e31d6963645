"""Batched matmul with float16 operands (random spec, seed 2026)."""

import torch
import torch.nn as nn

batch = 64
m = 683
k = 256
n = 32


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch, m, k, dtype=torch.float16), torch.randn(batch, k, n, dtype=torch.float16)]


def get_init_inputs():
    return []
