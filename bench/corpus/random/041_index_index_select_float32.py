"""Index_select along dim 0, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

rows = 8484
cols = 1024
num_index = 256


class Model(nn.Module):
    def forward(self, x, idx):
        return torch.index_select(x, 0, idx)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float32), torch.randint(0, rows, (num_index,))]


def get_init_inputs():
    return []
