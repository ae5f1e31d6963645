"""Batched matrix-vector product (batch, M, K) x (batch, K) -> (batch, M) via torch.mv semantics."""

import torch
import torch.nn as nn

batch_size = 1024
M = 1024
K = 512


class Model(nn.Module):
    def forward(self, mats, vecs):
        return torch.matmul(mats, vecs.unsqueeze(-1)).squeeze(-1)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K)]


def get_init_inputs():
    return []
