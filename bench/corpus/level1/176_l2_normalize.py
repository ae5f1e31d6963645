"""L2-normalizes embedding rows with F.normalize (p=2, eps=1e-12)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
embed_dim = 256


class Model(nn.Module):
    def forward(self, embeddings):
        return F.normalize(embeddings, p=2.0, dim=1)


def get_inputs():
    return [torch.randn(batch_size, embed_dim)]


def get_init_inputs():
    return []
