"""Running maximum (values and indices) along dim 1."""

import torch
import torch.nn as nn

batch_size = 1024
seq_len = 8192


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.cummax(x, dim=1)
        return values, indices


def get_inputs():
    return [torch.randn(batch_size, seq_len)]


def get_init_inputs():
    return []
