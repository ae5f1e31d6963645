"""Elementwise product of two half-precision tensors."""

import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A * B


def get_inputs():
    A = torch.randn(M, N).half()
    B = torch.randn(M, N).half()
    return [A, B]


def get_init_inputs():
    return []
