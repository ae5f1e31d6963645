"""Frobenius norm of every matrix in a batch."""

import torch
import torch.nn as nn

batch = 4096
rows = 128
cols = 256


class Model(nn.Module):
    def forward(self, mats):
        return torch.linalg.matrix_norm(mats, ord="fro")


def get_inputs():
    return [torch.randn(batch, rows, cols)]


def get_init_inputs():
    return []
