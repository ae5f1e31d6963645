"""Index_add along dim 0 with alpha=1.0, float32 (random spec, seed 2026)."""

import torch
import torch.nn as nn

rows = 33432
cols = 64
num_index = 22216


class Model(nn.Module):
    def forward(self, acc, idx, src):
        return acc.index_add(0, idx, src, alpha=1.0)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float32), torch.randint(0, rows, (num_index,)), torch.randn(num_index, cols, dtype=torch.float32)]


def get_init_inputs():
    return []
