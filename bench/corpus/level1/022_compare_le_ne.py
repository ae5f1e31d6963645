"""Mask of elements with x <= threshold and x != y, as float 0/1 (comparisons combined)."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 8192


class Model(nn.Module):
    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def forward(self, x, y):
        mask = (x <= self.threshold) & (x != y)
        return mask.float()


def get_inputs():
    x = torch.randint(-4, 5, (batch_size, dim)).float()
    y = torch.randint(-4, 5, (batch_size, dim)).float()
    return [x, y]


def get_init_inputs():
    return [1.0]
