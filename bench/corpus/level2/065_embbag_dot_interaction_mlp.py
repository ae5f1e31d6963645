"""Sparse features through EmbeddingBag (sum), dense features through a ReLU MLP, pairwise dot interaction, top linear."""

import torch
import torch.nn as nn

batch_size = 4096
num_tables = 8
rows_per_table = 100000
embedding_dim = 64
bag_size = 10
dense_features = 13


class Model(nn.Module):
    def __init__(self, num_tables, rows_per_table, embedding_dim, dense_features):
        super().__init__()
        self.tables = nn.ModuleList(
            [nn.EmbeddingBag(rows_per_table, embedding_dim, mode="sum") for _ in range(num_tables)]
        )
        self.bottom = nn.Sequential(nn.Linear(dense_features, 128), nn.ReLU(), nn.Linear(128, embedding_dim), nn.ReLU())
        n = num_tables + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = nn.Linear(embedding_dim + n * (n - 1) // 2, 1)

    def forward(self, dense, sparse_ids):
        x = self.bottom(dense)
        embs = [table(sparse_ids[:, t]) for t, table in enumerate(self.tables)]
        feats = torch.stack([x] + embs, dim=1)
        z = torch.bmm(feats, feats.transpose(1, 2))
        pairs = z[:, self.li, self.lj]
        return torch.sigmoid(self.top(torch.cat([x, pairs], dim=1)))


def get_inputs():
    dense = torch.rand(batch_size, dense_features)
    sparse_ids = torch.randint(0, rows_per_table, (batch_size, num_tables, bag_size))
    return [dense, sparse_ids]


def get_init_inputs():
    return [num_tables, rows_per_table, embedding_dim, dense_features]
