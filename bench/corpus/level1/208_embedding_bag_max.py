"""EmbeddingBag in 'max' mode (per-dimension maximum over each bag)."""

import torch
import torch.nn as nn

num_embeddings = 100000
embedding_dim = 64
batch_size = 8192
bag_size = 16


class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_embeddings, embedding_dim, mode="max")

    def forward(self, ids):
        return self.bag(ids)


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, bag_size))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
