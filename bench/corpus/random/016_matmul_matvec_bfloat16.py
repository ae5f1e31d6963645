"""matrix-vector A @ v with bfloat16 operands (random spec, seed 2026)."""

import torch
import torch.nn as nn

M = 7968
K = 4096


class Model(nn.Module):
    def forward(self, A, v):
        return torch.mv(A, v)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
