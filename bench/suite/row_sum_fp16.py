"""Row sum over the last dimension: fp16 in, fp32 out (8192 x 4096).

Computes ``x.float().sum(dim=-1)``: a pooled feature sum, accumulated in fp32 so the
result does not lose the low bits of 4096 addends.

Minimal bytes moved: ``rows * cols * 2 + rows * 4`` (read x, write one fp32 per row).
FLOPs: ``rows * cols`` (one add per element).
"""

import torch
import torch.nn as nn

family = "operator: row reduction (sum)"
rows = 8192
cols = 4096

cpu_shapes = {"rows": 32, "cols": 1000}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float().sum(dim=-1)


def get_inputs() -> list[torch.Tensor]:
    # A per-row mean so row sums differ in sign and size, not just noise around 0.
    mean = torch.randn(rows, 1) * 0.5
    return [(torch.randn(rows, cols) + mean).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return rows * cols * 2 + rows * 4


def flops() -> int:
    return rows * cols
