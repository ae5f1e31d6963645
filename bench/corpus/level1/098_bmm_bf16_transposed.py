"""bfloat16 batched product with a transposed second operand, bmm(a, b^T)."""

import torch
import torch.nn as nn

batch = 256
seq = 256
dim = 128


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2))


def get_inputs():
    return [torch.randn(batch, seq, dim, dtype=torch.bfloat16), torch.randn(batch, seq, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
