"""DLRM: bottom MLP on 13 dense features, 26 sum-pooled EmbeddingBag tables of mixed sizes, pairwise dot interaction, top MLP, sigmoid."""

import torch
import torch.nn as nn

batch_size = 2048
num_dense = 13
embedding_dim = 128
table_sizes = [100000, 50000, 20000, 5000, 1000, 300, 200000, 80000, 10000, 3000, 500, 60000, 150000,
               7000, 40000, 900, 25000, 120000, 2000, 90000, 400, 35000, 15000, 70000, 8000, 250000]
bag_size = 4


class Model(nn.Module):
    def __init__(self, num_dense, embedding_dim, table_sizes):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.EmbeddingBag(n, embedding_dim, mode="sum") for n in table_sizes])
        self.bottom_mlp = nn.Sequential(
            nn.Linear(num_dense, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, embedding_dim), nn.ReLU()
        )
        n = len(table_sizes) + 1
        rows, cols = torch.triu_indices(n, n, offset=1)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)
        top_in = embedding_dim + n * (n - 1) // 2
        self.top_mlp = nn.Sequential(
            nn.Linear(top_in, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
            nn.Linear(512, 1),
        )

    def forward(self, dense_x, sparse_ids):
        x = self.bottom_mlp(dense_x)
        ly = [emb(sparse_ids[:, i, :]) for i, emb in enumerate(self.embeddings)]
        T = torch.stack([x] + ly, dim=1)
        Z = torch.bmm(T, T.transpose(1, 2))
        Zflat = Z[:, self.rows, self.cols]
        return torch.sigmoid(self.top_mlp(torch.cat([x, Zflat], dim=1)))


def get_inputs():
    dense_x = torch.log1p(torch.rand(batch_size, num_dense) * 100)
    sparse_ids = torch.stack([torch.randint(0, n, (batch_size, bag_size)) for n in table_sizes], dim=1)
    return [dense_x, sparse_ids]


def get_init_inputs():
    return [num_dense, embedding_dim, table_sizes]
