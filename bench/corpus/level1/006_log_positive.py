"""Natural logarithm of a strictly positive tensor."""

import torch
import torch.nn as nn

n_rows = 16384
n_cols = 2048


class Model(nn.Module):
    def forward(self, x):
        return x.log()


def get_inputs():
    return [torch.rand(n_rows, n_cols) * 10 + 1e-3]


def get_init_inputs():
    return []
