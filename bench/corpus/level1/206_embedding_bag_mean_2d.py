"""EmbeddingBag in 'mean' mode over fixed-size bags given as a 2D index tensor."""

import torch
import torch.nn as nn

num_embeddings = 200000
embedding_dim = 128
batch_size = 16384
bag_size = 20


class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.embedding_bag = nn.EmbeddingBag(num_embeddings, embedding_dim, mode="mean")

    def forward(self, input):
        return self.embedding_bag(input)


def get_inputs():
    return [torch.randint(0, num_embeddings, (batch_size, bag_size))]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
