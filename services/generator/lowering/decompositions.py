"""Decompositions of operators PyTorch's tables leave whole and the lowering has no kernel
for, written in operators it has: each is what the operator computes, as PyTorch defines it,
so a spec that uses one gets a kernel program instead of a fallback.

They are added to the table ``capture.decompositions`` builds and traced with it, so the
operators they call decompose further like any other.
"""

from __future__ import annotations

import string
from typing import Any

import torch

aten = torch.ops.aten


def trilinear(i1: torch.Tensor, i2: torch.Tensor, i3: torch.Tensor, expand1: list[int], expand2: list[int],
              expand3: list[int], sumdim: list[int], unroll_dim: int = 1) -> torch.Tensor:
    """``aten._trilinear`` (``nn.Bilinear``, ``F.bilinear``): each input, unsqueezed at its
    ``expand`` dims to a common rank, multiplied elementwise and summed over ``sumdim`` (those
    dims leave the result). As one ``einsum``, which PyTorch contracts a pair at a time into
    batched matrix products: ``nn.Bilinear``'s [batch, in1] x [out, in1, in2] x [batch, in2]
    is then two products, not a [batch, out, in1, in2] broadcast. ``unroll_dim`` picks only
    PyTorch's loop order, not the result."""
    total = i1.dim() + len(expand1)
    if total > len(string.ascii_letters):
        raise NotImplementedError(f"_trilinear over {total} dims")
    letters = string.ascii_letters[:total]

    def subscripts(expand: list[int]) -> str:
        gone = {d % total for d in expand}
        return "".join(letters[d] for d in range(total) if d not in gone)

    summed = {d % total for d in sumdim}
    out = "".join(letters[d] for d in range(total) if d not in summed)
    return torch.einsum(f"{subscripts(expand1)},{subscripts(expand2)},{subscripts(expand3)}->{out}", i1, i2, i3)


def histc(x: torch.Tensor, bins: int = 100, min: float = 0,  # noqa: A002 - aten's argument names
          max: float = 0) -> torch.Tensor:  # noqa: A002
    """``torch.histc``: counts of ``x``'s elements in ``bins`` equal bins over [min, max]
    (the data's own range where min == max, widened by 1 each way where that is one value),
    an element equal to max in the last bin, elements outside (and NaN) not counted. The
    bin index is computed as PyTorch's GPU kernel computes it, (x - min) * bins / (max - min),
    truncated; the counts have ``x``'s dtype."""
    flat = x.reshape(-1)
    lo: torch.Tensor | float = float(min)
    hi: torch.Tensor | float = float(max)
    if lo == hi:
        lo, hi = flat.min(), flat.max()
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    inside = (flat >= lo) & (flat <= hi)
    at = ((flat - lo) * bins / (hi - lo)).to(torch.int64).clamp(0, bins - 1)
    at = torch.where(inside, at, 0)
    return torch.zeros(bins, dtype=x.dtype, device=x.device).scatter_add(0, at, inside.to(x.dtype))


def rrelu_with_noise(x: torch.Tensor, noise: torch.Tensor, lower: float = 0.125, upper: float = 1 / 3,
                     training: bool = False, generator: Any = None) -> Any:
    """``nn.RReLU``/``F.rrelu`` outside training: a leaky ReLU of slope (lower + upper) / 2,
    the noise left as it is. In training its slopes are random, which no kernel can be
    checked against: the operator stays whole (and unsupported)."""
    if training:
        return NotImplemented
    return torch.nn.functional.leaky_relu(x, (lower + upper) / 2), noise


def ours() -> dict[Any, Any]:
    """The decompositions above, by the operator each replaces."""
    return {aten._trilinear.default: trilinear, aten.histc.default: histc,
            aten.rrelu_with_noise_functional.default: rrelu_with_noise}
