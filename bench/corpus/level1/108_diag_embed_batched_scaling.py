"""Batched product of diagonal matrices built with diag_embed and dense matrices: diag(d_b) @ X_b."""

import torch
import torch.nn as nn

groups = 32
size = 1024
cols = 512


class Model(nn.Module):
    def forward(self, d, X):
        return torch.diag_embed(d) @ X


def get_inputs():
    return [torch.rand(groups, size) + 0.5, torch.randn(groups, size, cols)]


def get_init_inputs():
    return []
