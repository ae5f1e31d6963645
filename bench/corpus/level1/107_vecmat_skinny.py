"""Vector-matrix product x @ W for a 1D x (torch.mv on the transposed matrix)."""

import torch
import torch.nn as nn

K = 8192
N = 32768


class Model(nn.Module):
    def forward(self, x, W):
        return torch.mv(W.t(), x)


def get_inputs():
    return [torch.randn(K), torch.randn(K, N)]


def get_init_inputs():
    return []
