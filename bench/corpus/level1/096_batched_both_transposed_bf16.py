"""bfloat16 batched product of two operands that are both stored transposed: A^T @ B^T per batch."""

import torch
import torch.nn as nn

batch = 24
rows = 1536
inner = 512
cols = 1024


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A.transpose(-1, -2), B.transpose(-1, -2))


def get_inputs():
    A = torch.randn(batch, inner, rows, dtype=torch.bfloat16)
    B = torch.randn(batch, cols, inner, dtype=torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []
