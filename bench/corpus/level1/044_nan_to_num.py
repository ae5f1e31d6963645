"""Replaces NaN and infinities (produced by log of signed inputs) with finite values."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.nan_to_num(torch.log(x), nan=0.0, posinf=1e4, neginf=-1e4)


def get_inputs():
    x = torch.randn(batch_size, dim)
    x[:, ::7] = 0.0
    return [x]


def get_init_inputs():
    return []
