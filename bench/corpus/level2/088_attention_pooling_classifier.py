"""Attention pooling head: a learned query attends over patch tokens (nn.MultiheadAttention), then LayerNorm and a linear classifier."""

import torch
import torch.nn as nn

batch_size = 256
num_patches = 196
embed_dim = 768
num_heads = 12
num_classes = 1000


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads, num_classes):
        super().__init__()
        self.query = nn.Parameter(torch.randn(1, 1, embed_dim) * 0.02)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, patches):
        q = self.query.expand(patches.size(0), -1, -1)
        pooled, _ = self.attn(q, patches, patches, need_weights=False)
        return self.head(self.norm(pooled.squeeze(1)))


def get_inputs():
    return [torch.randn(batch_size, num_patches, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads, num_classes]
