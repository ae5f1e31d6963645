"""Half-precision embedding lookup with padding_idx=0 (padding rows are zero)."""

import torch
import torch.nn as nn

num_embeddings = 500000
embedding_dim = 128
batch_size = 4096
history_len = 100


class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, embedding_dim, padding_idx=0, dtype=torch.float16)

    def forward(self, ids):
        return self.emb(ids)


def get_inputs():
    ids = torch.randint(1, num_embeddings, (batch_size, history_len))
    ids[:, 80:] = 0
    return [ids]


def get_init_inputs():
    return [num_embeddings, embedding_dim]
