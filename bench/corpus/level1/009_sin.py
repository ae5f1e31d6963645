"""Elementwise sine over a 3D tensor."""

import torch
import torch.nn as nn

batch_size = 128
seq_len = 1024
dim = 256


class Model(nn.Module):
    def forward(self, x):
        return torch.sin(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim) * 3.14159]


def get_init_inputs():
    return []
