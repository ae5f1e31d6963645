"""index_add of rows into an accumulator at given row positions, scaled by alpha."""

import torch
import torch.nn as nn

num_rows = 100000
dim = 128
num_updates = 500000


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, acc, index, updates):
        return acc.index_add(0, index, updates, alpha=self.alpha)


def get_inputs():
    acc = torch.randn(num_rows, dim)
    index = torch.randint(0, num_rows, (num_updates,))
    updates = torch.randn(num_updates, dim)
    return [acc, index, updates]


def get_init_inputs():
    return [0.5]
