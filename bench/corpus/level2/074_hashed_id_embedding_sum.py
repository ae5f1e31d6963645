"""Hashing trick: raw int64 ids are hashed into a fixed table with a multiply-xorshift and modulo, embedded and summed per row."""

import torch
import torch.nn as nn

batch_size = 16384
ids_per_row = 32
table_size = 1 << 20
dim = 64


class Model(nn.Module):
    def __init__(self, table_size, dim):
        super().__init__()
        self.table_size = table_size
        self.table = nn.Embedding(table_size, dim)

    def forward(self, raw_ids):
        h = raw_ids * 0x9E3779B1
        h = h ^ (h >> 16)
        bucket = torch.remainder(h, self.table_size)
        return self.table(bucket).sum(dim=1)


def get_inputs():
    return [torch.randint(0, 2**31 - 1, (batch_size, ids_per_row))]


def get_init_inputs():
    return [table_size, dim]
