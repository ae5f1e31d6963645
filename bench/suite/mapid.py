"""MapId transform: map each id to its 1-based position in a sorted mapping, 0 if unknown.

Computes, for values [batch] (int64 ids) and mapping [unique_ids] (sorted, distinct
int64): ``out[i] = j + 1`` where ``mapping[j] == values[i]``, else 0. The paper's
MapIdTransform preprocessing operator (Section 5.4.1): values [100, 300, 500, 200, 999]
with mapping [100, 200, 300, 400, 500] give [1, 3, 5, 2, 0]. About 80% of the values are
known ids; the rest fall between or outside the mapping.

Sizes span the paper's range, 100-10000 unique ids x 10000-50000 batch; ``large_batch``
is the bandwidth-bound size of the H100 baseline table.

Minimal bytes moved: ``(2 * batch + unique_ids) * 8`` (values, out, the mapping once).
FLOPs: ``batch * ceil(log2(unique_ids + 1))`` comparisons of a binary search.
"""

import math

import torch
import torch.nn as nn

family = "paper operator: MapId (sec. 5.4.1)"
unique_ids = 10000
batch = 50000

cpu_shapes = {"unique_ids": 100, "batch": 500}
test_cases = [
    {"name": "u100_b10000", "sizes": {"unique_ids": 100, "batch": 10000}},
    {"name": "u10000_b10000", "sizes": {"unique_ids": 10000, "batch": 10000}},
    {"name": "large_batch", "sizes": {"unique_ids": 10000, "batch": 8000000}},
]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, values: torch.Tensor, mapping: torch.Tensor) -> torch.Tensor:
        pos = torch.searchsorted(mapping, values)
        found = mapping[pos.clamp(max=mapping.numel() - 1)] == values
        return torch.where(found, pos + 1, torch.zeros_like(pos))


def get_inputs() -> list[torch.Tensor]:
    # Distinct sorted ids with gaps >= 2, so ids between two mapped ones exist.
    mapping = torch.cumsum(torch.randint(2, 1000, (unique_ids,)), dim=0) + 12345
    known = mapping[torch.randint(0, unique_ids, (batch,))]
    unknown = torch.randint(0, int(mapping[-1]) + 5000, (batch,))
    values = torch.where(torch.rand(batch) < 0.8, known, unknown)
    return [values, mapping]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return (2 * batch + unique_ids) * 8


def flops() -> int:
    return batch * math.ceil(math.log2(unique_ids + 1))
