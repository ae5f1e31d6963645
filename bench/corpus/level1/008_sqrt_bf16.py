"""Square root of a bfloat16 tensor of absolute values."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.sqrt(x.abs())


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
