"""Threshold (x if x > 0.1 else -1) followed by tanhshrink."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.threshold = nn.Threshold(0.1, -1.0)
        self.shrink = nn.Tanhshrink()

    def forward(self, x):
        return self.shrink(self.threshold(x))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
