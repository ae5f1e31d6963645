"""Residual add + LayerNorm, fp16 (32768 x 1024).

Computes ``LayerNorm(x + residual)`` with weight and bias: the post-residual norm of every
transformer block, which eager PyTorch runs as an add kernel writing the sum to memory
and a norm kernel reading it back.

Minimal bytes moved: ``3 * rows * hidden * 2 + 2 * hidden * 2`` (x, residual, out,
weight, bias).
FLOPs: ``9 * rows * hidden`` (the add plus LayerNorm's 8 per element).
"""

import torch
import torch.nn as nn

family = "fusion: residual add + LayerNorm"
rows = 32768
hidden = 1024
eps = 1e-5

cpu_shapes = {"rows": 16, "hidden": 320}


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(hidden) * 0.1)
        self.norm.half()

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


def get_inputs() -> list[torch.Tensor]:
    x = (torch.randn(rows, hidden) * 1.5 + 0.3).to(torch.float16)
    residual = (torch.randn(rows, hidden) - 0.4).to(torch.float16)
    return [x, residual]


def get_init_inputs() -> list[object]:
    return [hidden, eps]


def bytes_moved() -> int:
    return 3 * rows * hidden * 2 + 2 * hidden * 2


def flops() -> int:
    return 9 * rows * hidden
