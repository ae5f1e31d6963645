"""Row softmax over wide rows (a KernelBench-format spec used by the profiler tests)."""

import torch
import torch.nn as nn

batch_size = 2
dim = 20000


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, dim)]


def get_init_inputs() -> list[object]:
    return []
