"""Batched matmul, fp16 (batch=512, 256x128 @ 128x256).

Computes ``torch.bmm(a, b)``: per-example interaction matrices (many small matmuls, the
batch dimension being the only source of parallelism beyond one tile).

Minimal bytes moved: ``batch * (m*k + k*n + m*n) * 2``.
FLOPs: ``2 * batch * m * n * k``.
"""

import torch
import torch.nn as nn

family = "operator: batched matmul"
batch = 512
m = 256
k = 128
n = 256

cpu_shapes = {"batch": 3, "m": 32, "k": 16, "n": 24}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs() -> list[torch.Tensor]:
    a = (torch.randn(batch, m, k) * 0.5 + 0.1).to(torch.float16)
    b = (torch.randn(batch, k, n) * 0.5 - 0.1).to(torch.float16)
    return [a, b]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return batch * (m * k + k * n + m * n) * 2


def flops() -> int:
    return 2 * batch * m * n * k
