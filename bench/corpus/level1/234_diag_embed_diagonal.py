"""Extracts the diagonal of batched matrices and embeds a vector batch as diagonal matrices."""

import torch
import torch.nn as nn

batch = 256
n = 512


class Model(nn.Module):
    def forward(self, mats, vecs):
        return torch.diagonal(mats, dim1=-2, dim2=-1).contiguous(), torch.diag_embed(vecs)


def get_inputs():
    return [torch.randn(batch, n, n), torch.randn(batch, n)]


def get_init_inputs():
    return []
