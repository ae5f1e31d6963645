"""SELU activation over a 3D tensor."""

import torch
import torch.nn as nn

batch = 256
tokens = 256
dim = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch, tokens, dim)]


def get_init_inputs():
    return []
