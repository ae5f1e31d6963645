"""Elementwise chain: GELU(x) * scale + y (a KernelBench-format spec)."""

import torch
import torch.nn as nn

rows = 8192
cols = 4096

cpu_shapes = {"rows": 64, "cols": 1024}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x) * self.scale + y


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs() -> list[object]:
    return [0.75]
