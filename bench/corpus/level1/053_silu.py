"""SiLU (swish) activation x * sigmoid(x)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 8192
hidden = 11008


class Model(nn.Module):
    def forward(self, x):
        return F.silu(x)


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return []
