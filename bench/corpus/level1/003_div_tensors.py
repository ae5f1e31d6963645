"""Elementwise division of one tensor by another strictly positive tensor."""

import torch
import torch.nn as nn

batch_size = 256
features = 128 * 1024


class Model(nn.Module):
    def forward(self, x, y):
        return torch.div(x, y)


def get_inputs():
    return [torch.randn(batch_size, features), torch.rand(batch_size, features) + 0.5]


def get_init_inputs():
    return []
