"""Row-wise RMSNorm with a learned weight (a KernelBench-format spec)."""

import torch
import torch.nn as nn

batch_size = 8192
hidden = 4096
eps = 1e-6

cpu_shapes = {"batch_size": 64, "hidden": 768}


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(hidden) * 0.1 + 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, hidden) * 2.0 + 0.5]


def get_init_inputs() -> list[object]:
    return [hidden, eps]
