"""Row softmax over the last dimension, fp16 (8192 x 4096).

Computes ``softmax(x, dim=-1)`` in fp16: the attention-score normalisation every
transformer-based recommendation model runs.

Minimal bytes moved: read x once and write the output once: ``2 * rows * cols * 2`` bytes.
FLOPs: per element a max compare, a subtract, an exp, a sum add and a divide:
``5 * rows * cols``.
"""

import torch
import torch.nn as nn

family = "operator: softmax"
rows = 8192
cols = 4096

cpu_shapes = {"rows": 16, "cols": 512}
test_cases = [{"name": "short_rows", "sizes": {"rows": 32768, "cols": 1024}}]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    # Logits with a real spread and a row-dependent offset: large values stress the
    # max-subtraction, the offset catches kernels that mix rows up.
    offset = torch.linspace(-8.0, 8.0, rows).unsqueeze(1)
    return [(torch.randn(rows, cols) * 4.0 + offset).to(torch.float16)]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return 2 * rows * cols * 2


def flops() -> int:
    return 5 * rows * cols
