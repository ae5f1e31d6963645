"""DCN-v2 ranking model: field embeddings + dense features, 3 full-rank cross layers in parallel with a deep ReLU tower, concatenated logit."""

import torch
import torch.nn as nn

batch_size = 4096
num_fields = 26
vocab_per_field = 40000
embed_dim = 16
num_dense = 13


class Model(nn.Module):
    def __init__(self, num_fields, vocab_per_field, embed_dim, num_dense, cross_layers=3):
        super().__init__()
        self.embedding = nn.Embedding(num_fields * vocab_per_field, embed_dim)
        self.register_buffer("field_offsets", torch.arange(num_fields) * vocab_per_field)
        d = num_fields * embed_dim + num_dense
        self.cross = nn.ModuleList([nn.Linear(d, d) for _ in range(cross_layers)])
        self.deep = nn.Sequential(
            nn.Linear(d, 1024), nn.BatchNorm1d(1024), nn.ReLU(),
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(),
        )
        self.logit = nn.Linear(d + 512, 1)

    def forward(self, dense, ids):
        emb = self.embedding(ids + self.field_offsets).flatten(1)
        x0 = torch.cat([dense, emb], dim=1)
        xl = x0
        for layer in self.cross:
            xl = x0 * layer(xl) + xl
        return self.logit(torch.cat([xl, self.deep(x0)], dim=1)).squeeze(1)


def get_inputs():
    return [torch.randn(batch_size, num_dense), torch.randint(0, vocab_per_field, (batch_size, num_fields))]


def get_init_inputs():
    return [num_fields, vocab_per_field, embed_dim, num_dense]
