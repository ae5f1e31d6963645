"""DeepFM-style scorer: field embedding lookup, first-order weights, FM interaction, DNN tower, sigmoid of the sum."""

import torch
import torch.nn as nn

batch_size = 8192
num_fields = 26
vocab_per_field = 50000
embed_dim = 16


class Model(nn.Module):
    def __init__(self, num_fields, vocab_per_field, embed_dim):
        super().__init__()
        total = num_fields * vocab_per_field
        self.embedding = nn.Embedding(total, embed_dim)
        self.linear = nn.Embedding(total, 1)
        self.register_buffer("offsets", torch.arange(num_fields) * vocab_per_field)
        self.dnn = nn.Sequential(
            nn.Linear(num_fields * embed_dim, 400), nn.ReLU(),
            nn.Linear(400, 400), nn.ReLU(),
            nn.Linear(400, 1),
        )

    def forward(self, field_ids):
        ids = field_ids + self.offsets
        v = self.embedding(ids)
        first = self.linear(ids).sum(dim=1)
        fm = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1, keepdim=True)
        deep = self.dnn(v.flatten(1))
        return torch.sigmoid(first + fm + deep)


def get_inputs():
    return [torch.randint(0, vocab_per_field, (batch_size, num_fields))]


def get_init_inputs():
    return [num_fields, vocab_per_field, embed_dim]
