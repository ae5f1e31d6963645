"""index_put with accumulate=True: adds values at (row, col) coordinate pairs into a matrix."""

import torch
import torch.nn as nn

rows = 8192
cols = 8192
nnz = 4000000


class Model(nn.Module):
    def forward(self, dense, row_idx, col_idx, values):
        return dense.index_put((row_idx, col_idx), values, accumulate=True)


def get_inputs():
    dense = torch.zeros(rows, cols)
    return [dense, torch.randint(0, rows, (nnz,)), torch.randint(0, cols, (nnz,)), torch.randn(nnz)]


def get_init_inputs():
    return []
