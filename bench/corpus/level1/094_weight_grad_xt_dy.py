"""Weight-gradient shaped product x^T @ dy: the first operand is the transpose of a (tokens, in) matrix."""

import torch
import torch.nn as nn

tokens = 16384
in_features = 1024
out_features = 4096


class Model(nn.Module):
    def forward(self, x, grad_out):
        return x.t() @ grad_out


def get_inputs():
    return [torch.randn(tokens, in_features), torch.randn(tokens, out_features) * 1e-2]


def get_init_inputs():
    return []
