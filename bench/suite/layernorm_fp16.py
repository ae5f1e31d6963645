"""LayerNorm over the last dimension with weight and bias, fp16 (8192 x 4096).

Computes ``(x - mean) / sqrt(var + eps) * weight + bias`` per row (biased variance,
as ``nn.LayerNorm``).

Minimal bytes moved: read x and write out (``2 * rows * hidden * 2``) plus weight and
bias once (``2 * hidden * 2``).
FLOPs: ``8 * rows * hidden`` (sum, square-sum, subtract, multiply by rstd, scale, shift,
and the two reduction adds, per element).
"""

import torch
import torch.nn as nn

family = "operator: LayerNorm"
rows = 8192
hidden = 4096
eps = 1e-5

cpu_shapes = {"rows": 16, "hidden": 768}


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        # Non-trivial affine parameters, so a kernel that ignores them fails.
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden) * 0.2 + 1.0)
            self.norm.bias.copy_(torch.randn(hidden) * 0.1)
        self.norm.half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(rows, hidden) * 2.0 + 0.5).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [hidden, eps]


def bytes_moved() -> int:
    return 2 * rows * hidden * 2 + 2 * hidden * 2


def flops() -> int:
    return 8 * rows * hidden
