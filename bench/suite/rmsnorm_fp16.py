"""RMSNorm forward with a learned weight, fp16 (8192 x 4096).

Computes ``x * rsqrt(mean(x^2) + eps) * weight`` per row, accumulating in fp32 (as
production RMSNorm does) and returning fp16.

Minimal bytes moved: ``2 * rows * hidden * 2 + hidden * 2`` (x, out, weight).
FLOPs: ``4 * rows * hidden`` (square, sum, two multiplies per element).
"""

import torch
import torch.nn as nn

family = "operator: RMSNorm forward"
rows = 8192
hidden = 4096
eps = 1e-6

cpu_shapes = {"rows": 16, "hidden": 768}
test_cases = [{"name": "narrow", "sizes": {"rows": 65536, "hidden": 512}}]


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.randn(hidden) * 0.1 + 1.0).to(torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        rms = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * rms * self.weight.float()).to(x.dtype)


def get_inputs() -> list[torch.Tensor]:
    return [(torch.randn(rows, hidden) * 2.0 + 0.5).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return [hidden, eps]


def bytes_moved() -> int:
    return 2 * rows * hidden * 2 + hidden * 2


def flops() -> int:
    return 4 * rows * hidden
