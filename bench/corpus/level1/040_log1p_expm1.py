"""Returns log1p(|x|) and expm1(x) of the same input."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.log1p(x.abs()), torch.expm1(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 1e-2]


def get_init_inputs():
    return []
