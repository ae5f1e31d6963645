"""index_select along dim 1 (selecting a subset of feature columns)."""

import torch
import torch.nn as nn

batch_size = 8192
num_features = 4096
num_selected = 1000


class Model(nn.Module):
    def __init__(self, num_features, num_selected):
        super().__init__()
        self.register_buffer("cols", torch.randperm(num_features)[:num_selected])

    def forward(self, x):
        return x.index_select(1, self.cols)


def get_inputs():
    return [torch.randn(batch_size, num_features)]


def get_init_inputs():
    return [num_features, num_selected]
