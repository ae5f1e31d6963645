"""Combines two int64 tensors as (a & b) | mask with a constant mask."""

import torch
import torch.nn as nn

num_elements = 32 * 1024 * 1024


class Model(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.mask = mask

    def forward(self, a, b):
        return torch.bitwise_or(torch.bitwise_and(a, b), self.mask)


def get_inputs():
    a = torch.randint(0, 2**40, (num_elements,))
    b = torch.randint(0, 2**40, (num_elements,))
    return [a, b]


def get_init_inputs():
    return [0xF0F0]
