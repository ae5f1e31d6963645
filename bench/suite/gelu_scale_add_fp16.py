"""Elementwise chain GELU(x) * scale + y, fp16 (8192 x 4096).

Computes ``gelu(x) * scale + y`` (exact erf GELU) in fp16: the activation-plus-residual
chain eager PyTorch runs as three kernels.

Minimal bytes moved: read x and y, write out: ``3 * rows * cols * 2``.
FLOPs: ``10 * rows * cols`` (erf-GELU counted as 8 operations, multiply, add).
"""

import torch
import torch.nn as nn

family = "operator: GELU chain"
rows = 8192
cols = 4096

cpu_shapes = {"rows": 16, "cols": 1000}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x) * self.scale + y


def get_inputs() -> list[torch.Tensor]:
    x = (torch.randn(rows, cols) * 2.0 - 0.25).to(torch.float16)
    y = (torch.randn(rows, cols) + 0.5).to(torch.float16)
    return [x, y]


def get_init_inputs() -> list[object]:
    return [0.75]


def bytes_moved() -> int:
    return 3 * rows * cols * 2


def flops() -> int:
    return 10 * rows * cols
