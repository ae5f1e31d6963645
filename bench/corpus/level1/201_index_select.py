"""index_select of rows of a table by an index vector (duplicates allowed)."""

import torch
import torch.nn as nn

num_rows = 1000000
dim = 64
num_lookups = 262144


class Model(nn.Module):
    def forward(self, table, idx):
        return torch.index_select(table, 0, idx)


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (num_lookups,))]


def get_init_inputs():
    return []
