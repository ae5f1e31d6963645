"""Elementwise equality of two integer tensors with a broadcast row, returned as a boolean mask."""

import torch
import torch.nn as nn

batch_size = 8192
num_fields = 1024


class Model(nn.Module):
    def forward(self, ids, targets):
        return torch.eq(ids, targets)


def get_inputs():
    ids = torch.randint(0, 16, (batch_size, num_fields))
    targets = torch.randint(0, 16, (1, num_fields))
    return [ids, targets]


def get_init_inputs():
    return []
