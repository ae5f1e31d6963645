"""Reorders values by a per-row index tensor with take_along_dim (e.g. after a sort)."""

import torch
import torch.nn as nn

batch_size = 2048
seq_len = 2048
hidden = 16


class Model(nn.Module):
    def forward(self, values, order):
        return torch.take_along_dim(values, order.unsqueeze(-1), dim=1)


def get_inputs():
    values = torch.randn(batch_size, seq_len, hidden)
    order = torch.argsort(torch.rand(batch_size, seq_len), dim=1)
    return [values, order]


def get_init_inputs():
    return []
