"""MBDT border bucketization: per-feature bucket index of each value, fp32 in, int32 out.

Computes, for x [batch, features] (fp32) and borders [features, num_borders] (each row
sorted ascending): ``out[b, f] = #{j : borders[f, j] < x[b, f]}`` (``torch.bucketize``
semantics with right=False), the bucketing step of the paper's MBDT preprocessing
operator (Section 5.4.2), which turns dense features into bucket ids for boosted-tree
features. Every feature has its own borders.

Minimal bytes moved: ``batch*features*4`` (x) + ``batch*features*4`` (int32 out) +
``features*num_borders*4`` (borders once).
FLOPs: ``batch * features * ceil(log2(num_borders + 1))`` comparisons.
"""

import math

import torch
import torch.nn as nn

family = "paper operator: MBDT bucketize (sec. 5.4.2)"
batch = 8192
features = 256
num_borders = 64

cpu_shapes = {"batch": 32, "features": 12, "num_borders": 9}
test_cases = [{"name": "many_borders", "sizes": {"batch": 4096, "features": 64, "num_borders": 1024}}]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, borders: torch.Tensor) -> torch.Tensor:
        # searchsorted is batched over the leading dim of both arguments: one row of
        # borders per feature, the feature's column of x as the queries.
        idx = torch.searchsorted(borders, x.t().contiguous(), out_int32=True)
        return idx.t().contiguous()


def get_inputs() -> list[torch.Tensor]:
    # Borders per feature: increasing, with feature-specific start and spacing.
    start = torch.randn(features, 1) * 3.0
    gaps = torch.rand(features, num_borders) * 0.5 + 0.01
    borders = start + torch.cumsum(gaps, dim=1)
    # Values spread over (and beyond) each feature's border range, exact border hits too.
    lo, hi = borders[:, :1].t(), borders[:, -1:].t()
    x = lo + (hi - lo) * (torch.rand(batch, features) * 1.2 - 0.1)
    hits = torch.rand(batch, features) < 0.05
    x = torch.where(hits, borders[torch.arange(features), torch.randint(0, num_borders, (features,))], x)
    return [x, borders]


def get_init_inputs() -> list[object]:
    return []


def bytes_moved() -> int:
    return batch * features * 4 * 2 + features * num_borders * 4


def flops() -> int:
    return batch * features * math.ceil(math.log2(num_borders + 1))
