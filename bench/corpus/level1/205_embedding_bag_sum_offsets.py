"""EmbeddingBag in 'sum' mode over a flat index list with bag offsets."""

import torch
import torch.nn as nn

num_embeddings = 1000000
embedding_dim = 64
batch_size = 8192
bag_size = 40


class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_embeddings, embedding_dim, mode="sum")

    def forward(self, indices, offsets):
        return self.bag(indices, offsets)


def get_inputs():
    indices = torch.randint(0, num_embeddings, (batch_size * bag_size,))
    offsets = torch.arange(0, batch_size * bag_size, bag_size)
    return [indices, offsets]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
