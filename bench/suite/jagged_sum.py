"""Jagged sum: sum each variable-length segment of a jagged tensor, fp32 (B=4096, avg 200, D=128).

Computes ``out[b] = values[offsets[b]:offsets[b+1]].sum(dim=0)`` for values [total, dim]
and offsets [batch + 1]: pooling a variable-length history per user (a jagged op of the
KernelEvolve paper). Segment lengths are skewed (uniform cut points give an exponential
length distribution, including empty segments whose sum is 0) and sum to exactly
``batch * avg_len``.

Minimal bytes moved: ``(batch*avg_len*dim + batch*dim) * 4 + (batch + 1) * 8``.
FLOPs: ``batch * avg_len * dim`` (one add per element).
"""

import torch
import torch.nn as nn

family = "paper operator: jagged sum"
batch = 4096
avg_len = 200
dim = 128

cpu_shapes = {"batch": 8, "avg_len": 6, "dim": 16}
# Segments of up to ~1500 rows summed in fp32: the reference (index_add_, atomic on a GPU)
# and any kernel differ by summation order, up to ~1e-3 where a shifted input makes a
# segment's sum nearly cancel. torchbench's fp32 default (1e-4) would fail correct kernels
# at random; a missing or doubled row is still off by ~1.
atol = 1e-2


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        lengths = offsets[1:] - offsets[:-1]
        segment = torch.repeat_interleave(torch.arange(lengths.numel(), device=values.device), lengths)
        out = torch.zeros(lengths.numel(), values.shape[1], dtype=values.dtype, device=values.device)
        return out.index_add_(0, segment, values)


def get_inputs() -> list[torch.Tensor]:
    total = batch * avg_len
    cuts, _ = torch.sort(torch.randint(0, total + 1, (batch - 1,)))
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), cuts, torch.full((1,), total, dtype=torch.int64)])
    values = torch.randn(total, dim) + 0.25
    return [values, offsets]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return (batch * avg_len * dim + batch * dim) * 4 + (batch + 1) * 8


def flops() -> int:
    return batch * avg_len * dim
