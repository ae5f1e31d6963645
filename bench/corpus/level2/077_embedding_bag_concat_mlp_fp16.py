"""Half-precision pooled embeddings (mean bags) from 4 tables, concatenated with dense features, 2-layer ReLU MLP."""

import torch
import torch.nn as nn

batch_size = 8192
num_tables = 4
table_rows = 250000
emb_dim = 128
bag = 20
dense_dim = 256


class Model(nn.Module):
    def __init__(self, num_tables, table_rows, emb_dim, dense_dim):
        super().__init__()
        self.bags = nn.ModuleList(
            [nn.EmbeddingBag(table_rows, emb_dim, mode="mean", dtype=torch.float16) for _ in range(num_tables)]
        )
        in_dim = num_tables * emb_dim + dense_dim
        self.mlp = nn.Sequential(nn.Linear(in_dim, 1024, dtype=torch.float16), nn.ReLU(),
                                 nn.Linear(1024, 256, dtype=torch.float16), nn.ReLU())

    def forward(self, ids, dense):
        pooled = [b(ids[i]) for i, b in enumerate(self.bags)]
        return self.mlp(torch.cat(pooled + [dense], dim=1))


def get_inputs():
    ids = torch.randint(0, table_rows, (num_tables, batch_size, bag))
    return [ids, torch.randn(batch_size, dense_dim, dtype=torch.float16)]


def get_init_inputs():
    return [num_tables, table_rows, emb_dim, dense_dim]
