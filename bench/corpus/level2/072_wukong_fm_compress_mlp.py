"""Factorization-machine block with embedding compression: X X^T over a projected copy of X, flatten, LayerNorm, MLP."""

import torch
import torch.nn as nn

batch_size = 2048
num_embeddings = 64
embed_dim = 128
compressed = 16


class Model(nn.Module):
    def __init__(self, num_embeddings, embed_dim, compressed):
        super().__init__()
        self.compress = nn.Linear(num_embeddings, compressed, bias=False)
        self.norm = nn.LayerNorm(num_embeddings * compressed)
        self.mlp = nn.Sequential(nn.Linear(num_embeddings * compressed, 1024), nn.ReLU(),
                                 nn.Linear(1024, num_embeddings * embed_dim // 4))

    def forward(self, X):
        Y = self.compress(X.transpose(1, 2))
        inter = torch.bmm(X, Y)
        return self.mlp(self.norm(inter.flatten(1)))


def get_inputs():
    return [torch.randn(batch_size, num_embeddings, embed_dim) / embed_dim ** 0.5]


def get_init_inputs():
    return [num_embeddings, embed_dim, compressed]
