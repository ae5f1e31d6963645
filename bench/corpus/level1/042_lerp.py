"""Linear interpolation start + weight * (end - start) with a per-element weight tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def forward(self, start, end, weight):
        return torch.lerp(start, end, weight)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
