"""Returns the strictly upper triangle (diagonal=1) and the lower triangle (diagonal=-2) of batched matrices."""

import torch
import torch.nn as nn

batch = 64
n = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.triu(x, diagonal=1), torch.tril(x, diagonal=-2)


def get_inputs():
    return [torch.randn(batch, n, n)]


def get_init_inputs():
    return []
