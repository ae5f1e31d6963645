"""Per-example batched matmul, broadcast bias, ReLU and residual add."""

import torch
import torch.nn as nn

batch = 512
tokens = 128
dim = 256


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(1, 1, dim) * 0.1)

    def forward(self, x, w):
        return x + torch.relu(torch.bmm(x, w) + self.bias)


def get_inputs():
    return [torch.randn(batch, tokens, dim), torch.randn(batch, dim, dim) / dim ** 0.5]


def get_init_inputs():
    return [dim]
