"""Row-wise softmax over the last dimension (a KernelBench-format spec).

kevolve accepts this format as input: a reference ``Model``, ``get_inputs()`` and
``get_init_inputs()``, with module-level size constants. ``cpu_shapes`` gives the sizes the
cpu pool screens at; the GPU pools use the sizes below.
"""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096

cpu_shapes = {"batch_size": 64, "dim": 1000}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    # Scaled so rows have a real spread (large logits stress the max-subtraction).
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs() -> list[object]:
    return []
