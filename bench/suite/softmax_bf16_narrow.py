"""Row softmax over short rows, bf16 (65536 x 512).

Computes ``softmax(x, dim=-1)`` in bf16 on many short rows, the shape where torch.compile
reaches only ~40% of copy bandwidth on an H100 (its row-per-block schedule leaves the
memory system idle between tiny rows).

Minimal bytes moved: ``2 * rows * cols * 2`` (read x, write out, 2 bytes each).
FLOPs: ``5 * rows * cols`` (max, subtract, exp, sum, divide per element).
"""

import torch
import torch.nn as nn

family = "operator: softmax"
rows = 65536
cols = 512

cpu_shapes = {"rows": 64, "cols": 128}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    offset = torch.linspace(-6.0, 6.0, rows).unsqueeze(1)
    return [(torch.randn(rows, cols) * 3.0 + offset).to(torch.bfloat16)]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return 2 * rows * cols * 2


def flops() -> int:
    return 5 * rows * cols
