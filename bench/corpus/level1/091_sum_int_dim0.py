"""Sum of int32 counts over the first two dimensions (result int64)."""

import torch
import torch.nn as nn

num_shards = 64
batch = 1024
buckets = 4096


class Model(nn.Module):
    def forward(self, counts):
        return counts.sum(dim=(0, 1))


def get_inputs():
    return [torch.randint(0, 100, (num_shards, batch, buckets), dtype=torch.int32)]


def get_init_inputs():
    return []
