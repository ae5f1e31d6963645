"""Reciprocal square root of a positive tensor."""

import torch
import torch.nn as nn

size = 64 * 1024 * 1024


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.rsqrt(x)


def get_inputs():
    return [torch.rand(size) + 0.01]


def get_init_inputs():
    return []
