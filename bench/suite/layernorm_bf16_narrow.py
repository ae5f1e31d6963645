"""LayerNorm on short rows with weight and bias, bf16 (65536 x 512).

Computes ``nn.LayerNorm(512)`` on 65536 rows in bf16: the per-token norm of a
recommendation model's interaction layers, where torch.compile reaches about a third of
copy bandwidth on an H100.

Minimal bytes moved: ``2 * rows * hidden * 2 + 2 * hidden * 2`` (x, out, weight, bias).
FLOPs: ``8 * rows * hidden``.
"""

import torch
import torch.nn as nn

family = "operator: LayerNorm"
rows = 65536
hidden = 512
eps = 1e-5

cpu_shapes = {"rows": 64, "hidden": 128}


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(hidden) * 0.1)
        self.norm.to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(rows, hidden) * 1.5 - 0.3).to(torch.bfloat16)]


def get_init_inputs() -> list[object]:
    return [hidden, eps]


def bytes_moved() -> int:
    return 2 * rows * hidden * 2 + 2 * hidden * 2


def flops() -> int:
    return 8 * rows * hidden
