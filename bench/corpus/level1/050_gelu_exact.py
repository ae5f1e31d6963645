"""GELU activation, exact erf form."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
seq_len = 512
intermediate_size = 4096


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, intermediate_size)]


def get_init_inputs():
    return []
