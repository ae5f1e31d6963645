"""Compressed interaction network: repeated outer products of field embeddings with the base, compressed by 1x1 Conv1d, sum-pooled per layer, plus a linear logit."""

import torch
import torch.nn as nn

batch_size = 4096
num_fields = 39
embed_dim = 16
layer_sizes = [128, 128, 128]


class Model(nn.Module):
    def __init__(self, num_fields, layer_sizes):
        super().__init__()
        self.convs = nn.ModuleList()
        prev = num_fields
        for size in layer_sizes:
            self.convs.append(nn.Conv1d(num_fields * prev, size, kernel_size=1))
            prev = size
        self.fc = nn.Linear(sum(layer_sizes), 1)

    def forward(self, x0):
        B, m, D = x0.shape
        h = x0
        pooled = []
        for conv in self.convs:
            z = torch.einsum("bmd,bhd->bmhd", x0, h).reshape(B, -1, D)
            h = torch.relu(conv(z))
            pooled.append(h.sum(dim=2))
        return self.fc(torch.cat(pooled, dim=1))


def get_inputs():
    return [torch.randn(batch_size, num_fields, embed_dim) * 0.1]


def get_init_inputs():
    return [num_fields, layer_sizes]
