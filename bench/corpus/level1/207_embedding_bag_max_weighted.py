"""Functional embedding_bag with per-sample weights in 'sum' mode and variable-length bags."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_embeddings = 300000
embedding_dim = 96
batch_size = 4096
total_ids = 4096 * 30


class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embedding_dim) * 0.05)

    def forward(self, indices, offsets, per_sample_weights):
        return F.embedding_bag(indices, self.weight, offsets, mode="sum", per_sample_weights=per_sample_weights)


def get_inputs():
    indices = torch.randint(0, num_embeddings, (total_ids,))
    cuts = torch.sort(torch.randint(0, total_ids, (batch_size - 1,))).values
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), cuts])
    weights = torch.rand(total_ids)
    return [indices, offsets, weights]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
