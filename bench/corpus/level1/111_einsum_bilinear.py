"""Bilinear form per batch via einsum: out[b, o] = sum_ij x[b, i] W[o, i, j] y[b, j]."""

import torch
import torch.nn as nn

batch_size = 1024
in1 = 256
in2 = 256
out_features = 64


class Model(nn.Module):
    def __init__(self, in1, in2, out_features):
        super().__init__()
        self.W = nn.Parameter(torch.randn(out_features, in1, in2) * 0.01)

    def forward(self, x, y):
        return torch.einsum("bi,oij,bj->bo", x, self.W, y)


def get_inputs():
    return [torch.randn(batch_size, in1), torch.randn(batch_size, in2)]


def get_init_inputs():
    return [in1, in2, out_features]
