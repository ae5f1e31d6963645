"""Factorization-machine second-order term: 0.5 * ((sum_i v_i)^2 - sum_i v_i^2) summed over the embedding dimension."""

import torch
import torch.nn as nn

batch_size = 65536
num_fields = 39
embed_dim = 16


class Model(nn.Module):
    def forward(self, field_embs):
        square_of_sum = field_embs.sum(dim=1).pow(2)
        sum_of_square = field_embs.pow(2).sum(dim=1)
        return 0.5 * (square_of_sum - sum_of_square).sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, num_fields, embed_dim) * 0.1]


def get_init_inputs():
    return []
