"""Cosine classifier: L2-normalize features and class weights, matmul, scale by s (normalized-softmax logits)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
embed_dim = 512
num_identities = 20000


class Model(nn.Module):
    def __init__(self, embed_dim, num_identities, s):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_identities, embed_dim) * 0.01)
        self.s = s

    def forward(self, embeddings):
        cos = F.linear(F.normalize(embeddings, dim=1), F.normalize(self.weight, dim=1))
        return self.s * cos


def get_inputs():
    return [torch.randn(batch_size, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_identities, 64.0]
