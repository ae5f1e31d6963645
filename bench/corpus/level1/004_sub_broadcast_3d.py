"""Subtracts a per-(batch, feature) tensor broadcast along the middle dimension of a 3D tensor."""

import torch
import torch.nn as nn

batch = 64
seq_len = 512
hidden = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, center: torch.Tensor) -> torch.Tensor:
        return x - center


def get_inputs():
    return [torch.randn(batch, seq_len, hidden), torch.randn(batch, 1, hidden)]


def get_init_inputs():
    return []
