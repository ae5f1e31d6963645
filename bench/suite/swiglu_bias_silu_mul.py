"""Gated activation: SiLU(a + bias) * gate, fp16 (8192 x 4096).

Computes ``silu(a + bias) * gate``: the gating of SwiGLU-style MLPs in ranking models,
three eager kernels (add, silu, mul) that one fused pass replaces.

Minimal bytes moved: ``3 * rows * cols * 2 + cols * 2`` (a, gate, out, bias).
FLOPs: ``7 * rows * cols`` (add, sigmoid counted as 4, two multiplies).
"""

import torch
import torch.nn as nn

family = "fusion: bias + SiLU + mul (gated)"
rows = 8192
cols = 4096

cpu_shapes = {"rows": 16, "cols": 1000}


class Model(nn.Module):
    def __init__(self, cols: int) -> None:
        super().__init__()
        self.bias = nn.Parameter((torch.randn(cols) * 0.5).to(torch.float16))

    def forward(self, a: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(a + self.bias) * gate


def get_inputs() -> list[torch.Tensor]:
    a = (torch.randn(rows, cols) * 2.0 - 0.3).to(torch.float16)
    gate = (torch.randn(rows, cols) + 0.2).to(torch.float16)
    return [a, gate]


def get_init_inputs() -> list[object]:
    return [cols]


def bytes_moved() -> int:
    return 3 * rows * cols * 2 + cols * 2


def flops() -> int:
    return 7 * rows * cols
