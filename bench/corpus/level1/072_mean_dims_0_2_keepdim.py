"""Mean over dimensions 0 and 2 of a 4D tensor with keepdim (per-channel-row statistics)."""

import torch
import torch.nn as nn

shape = (32, 64, 128, 128)


class Model(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.mean(x, dim=self.dims, keepdim=True)


def get_inputs():
    return [torch.randn(*shape)]


def get_init_inputs():
    return [(0, 2)]
