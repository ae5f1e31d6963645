"""Index_select along dim 1, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

rows = 60928
cols = 224
num_index = 2048


class Model(nn.Module):
    def forward(self, x, idx):
        return torch.index_select(x, 1, idx)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float32), torch.randint(0, cols, (num_index,))]


def get_init_inputs():
    return []
