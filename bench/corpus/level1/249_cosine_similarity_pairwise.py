"""Cosine similarity between every query and the broadcast key set (dim=-1, eps=1e-8)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_queries = 512
num_keys = 2048
dim = 128


class Model(nn.Module):
    def forward(self, queries, keys):
        return F.cosine_similarity(queries.unsqueeze(1), keys.unsqueeze(0), dim=-1, eps=1e-8)


def get_inputs():
    return [torch.randn(num_queries, dim), torch.randn(num_keys, dim)]


def get_init_inputs():
    return []
