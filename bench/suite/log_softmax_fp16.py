"""Row log-softmax over the last dimension, fp16 (8192 x 4096).

Computes ``log_softmax(x, dim=-1) = x - max - log(sum(exp(x - max)))``: the loss-side
normalisation of multi-class heads.

Minimal bytes moved: ``2 * rows * cols * 2`` (read x, write out, fp16).
FLOPs: ``5 * rows * cols`` (max, subtract, exp, sum, final subtract per element; the
per-row log is negligible).
"""

import torch
import torch.nn as nn

family = "operator: log-softmax"
rows = 8192
cols = 4096

cpu_shapes = {"rows": 16, "cols": 500}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    offset = torch.linspace(-5.0, 5.0, rows).unsqueeze(1)
    return [(torch.randn(rows, cols) * 3.0 + offset).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return 2 * rows * cols * 2


def flops() -> int:
    return 5 * rows * cols
