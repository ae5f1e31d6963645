"""Resampling: nearest, nearest-exact and linear (``linear``, ``bilinear``, ``trilinear``)
upsampling over 1 to 3 spatial dimensions, and bicubic over 2, with sizes or scale factors
and either ``align_corners``.

Each is a lazy gather: output element o reads the input at source positions computed from
o, so it fuses into whichever kernel reads it. Source positions follow PyTorch's kernels
exactly, in float32 as they compute them (``compute_scales_value``,
``area_pixel_compute_source_index``): a scale factor s given by the caller means 1/s
rounded to float32, a size means In/Out in float32. A nearest index whose float formula
equals an integer one for every output position (scale 2, or In/Out when that is exact)
is written as that integer formula, which keeps the gather a plain index expression.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from services.generator.lowering.indexing import Expr, FloorDiv
from services.generator.lowering.ir import FLOATS, KernelWriter, Lazy, RuntimeScalar, Unsupported, Value
from services.generator.lowering.ops_pointwise import out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

RECOMPUTE_BUDGET = 4


@dataclass(frozen=True)
class Axis:
    """One resampled dimension: sizes and the float32 scale PyTorch multiplies by."""

    in_size: int
    out_size: int
    scale: float  # a float32 value, held exactly in a Python float


def _f32(value: float) -> float:
    return float(np.float32(value))


def _lit(value: float) -> str:
    """A float32 value as a literal that Triton reads back to exactly that value."""
    return repr(float(value))


def nearest_axis(in_size: int, out_size: int, factor: float | None) -> Axis:
    # compute_scales_value<float>: 1/factor (in double, then float) or In/Out in float.
    if factor is not None and factor > 0:
        return Axis(in_size, out_size, _f32(1.0 / factor))
    return Axis(in_size, out_size, float(np.float32(in_size) / np.float32(out_size)))


def linear_axis(in_size: int, out_size: int, factor: float | None, align_corners: bool) -> Axis:
    # area_pixel_compute_scale<float>
    if align_corners:
        scale = float(np.float32(in_size - 1) / np.float32(out_size - 1)) if out_size > 1 else 0.0
        return Axis(in_size, out_size, scale)
    return nearest_axis(in_size, out_size, factor)


def nearest_table(axis: Axis, exact: bool) -> np.ndarray:
    """Every output position's source index, computed as PyTorch's nearest_idx does."""
    o = np.arange(axis.out_size, dtype=np.int64)
    if not exact and axis.out_size == axis.in_size:
        return o
    if not exact and axis.out_size == 2 * axis.in_size:
        return o >> 1
    of = o.astype(np.float32)
    if exact:
        of = of + np.float32(0.5)
    src = np.floor(of * np.float32(axis.scale)).astype(np.int64)
    return np.minimum(src, axis.in_size - 1)


def integer_formula(axis: Axis, exact: bool) -> tuple[int, int, int] | None:
    """(num, shift, den) when every source index equals (o * num + shift) // den, the float
    formula's result for o and for (o + 1/2) without rounding; None when rounding shows."""
    num, den = (2 * axis.in_size, 2 * axis.out_size) if exact else (axis.in_size, axis.out_size)
    shift = axis.in_size if exact else 0
    positions = np.arange(axis.out_size, dtype=np.int64)
    if np.array_equal(nearest_table(axis, exact), (positions * num + shift) // den):
        return num, shift, den
    return None


def nearest_source(k: KernelWriter, axis: Axis, o: Expr, exact: bool) -> Expr:
    """The input index output index ``o`` reads along ``axis``."""
    if sympy.sympify(o).is_Integer:
        return sympy.Integer(int(nearest_table(axis, exact)[int(o)]))
    formula = integer_formula(axis, exact)
    if formula is not None:
        num, shift, den = formula
        return FloorDiv(o * num + shift, den)
    of = f"({k.index(o)}).to(tl.float32)" + (" + 0.5" if exact else "")
    src = k.var(f"tl.minimum(tl.floor(({of}) * {_lit(axis.scale)}).to(tl.int32), {axis.in_size - 1})",
                "int32")
    return k.opaque(src)


def linear_source(k: KernelWriter, axis: Axis, o: Expr, align: bool) -> tuple[Expr, Expr, str, str]:
    """(lower index, upper index, lower weight, upper weight) along ``axis`` at ``o``, as
    PyTorch's ``compute_source_index_and_lambda`` computes them."""
    of = k.var(f"({k.index(o)}).to(tl.float32)" if not sympy.sympify(o).is_Integer
               else f"tl.full([1], {int(o)}, tl.float32)", "float32")
    scale = _lit(axis.scale)
    if align:
        src = k.var(f"{scale} * {of}", "float32")
    else:
        src = k.var(f"tl.maximum({scale} * ({of} + 0.5) - 0.5, 0.0)", "float32")
    low = k.var(f"tl.minimum(tl.floor({src}).to(tl.int32), {axis.in_size - 1})", "int32")
    high = k.var(f"{low} + ({low} < {axis.in_size - 1}).to(tl.int32)", "int32")
    upper = k.var(f"tl.minimum(tl.maximum({src} - {low}.to(tl.float32), 0.0), 1.0)", "float32")
    lower = k.var(f"1.0 - {upper}", "float32")
    return k.opaque(low), k.opaque(high), lower, upper


CUBIC_A = -0.75  # PyTorch's cubic convolution coefficient


def cubic_source(k: KernelWriter, axis: Axis, o: Expr, align: bool) -> tuple[list[Expr], list[str]]:
    """The four input indices (clamped into the input) and weights output index ``o`` blends
    along ``axis``, as PyTorch's bicubic kernel computes them (the source index is not
    clamped at 0, its floor and fraction are guarded as for linear modes)."""
    of = k.var(f"({k.index(o)}).to(tl.float32)" if not sympy.sympify(o).is_Integer
               else f"tl.full([1], {int(o)}, tl.float32)", "float32")
    scale = _lit(axis.scale)
    src = k.var(f"{scale} * {of}" if align else f"{scale} * ({of} + 0.5) - 0.5", "float32")
    base = k.var(f"tl.minimum(tl.floor({src}).to(tl.int32), {axis.in_size - 1})", "int32")
    t = k.var(f"tl.minimum(tl.maximum({src} - {base}.to(tl.float32), 0.0), 1.0)", "float32")
    u = k.var(f"1.0 - {t}", "float32")
    a = CUBIC_A

    def near(x: str) -> str:  # cubic_convolution1, |x| <= 1
        return k.var(f"(({a + 2!r} * {x} - {a + 3!r}) * {x} * {x} + 1.0)", "float32")

    def far(x: str) -> str:  # cubic_convolution2, 1 < |x| < 2
        y = f"({x} + 1.0)"
        return k.var(f"((({a!r} * {y} - {5 * a!r}) * {y} + {8 * a!r}) * {y} - {4 * a!r})", "float32")

    weights = [far(t), near(t), near(u), far(u)]
    hi = axis.in_size - 1
    indices = [k.opaque(k.var(f"tl.minimum(tl.maximum({base} + {j - 1}, 0), {hi})", "int32"))
               for j in range(4)]
    return indices, weights


def _factor(value: Any) -> float | None:
    if value is None:
        return None
    # A scale held in a module attribute: the graph's sizes were captured for this value.
    return float(value.value if isinstance(value, RuntimeScalar) else value)


def _arguments(node: Node, args: list[Any], kwargs: dict[str, Any], rank: int,
               linear: bool) -> tuple[bool, list[float | None]]:
    """(align_corners, per-dimension scale factors) from a ``.vec`` or ``.default`` call."""
    rest = list(args[2:])
    align = False
    if linear:
        align = bool(rest.pop(0) if rest else kwargs.get("align_corners", False))
    if node.target.endswith(".vec"):
        factors = rest[0] if rest else kwargs.get("scale_factors")
        factors = list(factors) if factors is not None else [None] * rank
    else:
        names = {1: ["scales"], 2: ["scales_h", "scales_w"], 3: ["scales_d", "scales_h", "scales_w"]}[rank]
        factors = [rest[i] if i < len(rest) else kwargs.get(name) for i, name in enumerate(names)]
    return align, [_factor(f) for f in factors]


def _source(b: Builder, x: Value, taps: int, out_numel: int) -> Value:
    """``x`` stored first when recomputing it at every extra read would cost more."""
    reads = out_numel * taps / max(1, x.numel)
    if x.cost * (reads - 1) > RECOMPUTE_BUDGET:
        return b.realize(x, "resample_in")
    return x


NEAREST = [f"aten.{op}{r}d.{o}" for op in ("upsample_nearest", "_upsample_nearest_exact") for r in (1, 2, 3)
           for o in ("vec", "default")]
LINEAR = [f"aten.{op}.{o}" for op in ("upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d")
          for o in ("vec", "default")]
CUBIC = ["aten.upsample_bicubic2d.vec", "aten.upsample_bicubic2d.default"]


@lowers(*NEAREST)
def upsample_nearest(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    shape, dtype = out_meta(node)
    rank = int(node.target.split(".")[1][-2])
    exact = "exact" in node.target
    _, factors = _arguments(node, args, kwargs, rank, linear=False)
    axes = [nearest_axis(int(i), int(o), f)
            for i, o, f in zip(x.shape[-rank:], shape[-rank:], factors, strict=True)]
    x = _source(b, x, 1, math.prod(shape))
    lead = len(shape) - rank

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        pos = [nearest_source(k, axis, o, exact) for axis, o in zip(axes, idx[lead:], strict=True)]
        return x.load(k, [*idx[:lead], *pos], mask)

    # With integer formulas the gather is a view (a matrix product or convolution reads it in
    # place rather than storing the larger upsampled tensor); float formulas cost an operator.
    floats = any(integer_formula(axis, exact) is None for axis in axes)
    return Lazy(shape, dtype, fn, x.cost + (1 if floats else 0))


@lowers(*LINEAR)
def upsample_linear(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    if x.dtype not in FLOATS:
        raise Unsupported(f"{node.target} of a {x.dtype} tensor")
    shape, dtype = out_meta(node)
    rank = {"upsample_linear1d": 1, "upsample_bilinear2d": 2,
            "upsample_trilinear3d": 3}[node.target.split(".")[1]]
    align, factors = _arguments(node, args, kwargs, rank, linear=True)
    axes = [linear_axis(int(i), int(o), f, align) for i, o, f in zip(x.shape[-rank:], shape[-rank:], factors,
                                                                     strict=True)]
    # A dimension of unchanged size is copied (PyTorch's special case), not interpolated.
    moved = [d for d, a in enumerate(axes) if a.in_size != a.out_size]
    x = _source(b, x, 2 ** len(moved), math.prod(shape))
    lead = len(shape) - rank

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        outs = list(idx[lead:])
        sources = {d: linear_source(k, axes[d], outs[d], align) for d in moved}

        def blend(i: int, pos: list[Expr]) -> str:
            # PyTorch's nesting: w0 * (inner at the lower index) + w1 * (inner at the upper one)
            if i == len(moved):
                return k.cast(x.load(k, [*idx[:lead], *pos], mask), "float32")
            d = moved[i]
            low, high, w0, w1 = sources[d]
            at_low, at_high = list(pos), list(pos)
            at_low[d], at_high[d] = low, high
            return k.var(f"{w0} * {blend(i + 1, at_low)} + {w1} * {blend(i + 1, at_high)}", "float32")

        return blend(0, outs)

    return Lazy(shape, dtype, fn, (2 ** len(moved)) * (x.cost + 2) + 4)


@lowers(*CUBIC)
def upsample_bicubic(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    if x.dtype not in FLOATS:
        raise Unsupported(f"{node.target} of a {x.dtype} tensor")
    shape, dtype = out_meta(node)
    align, factors = _arguments(node, args, kwargs, 2, linear=True)
    axes = [linear_axis(int(i), int(o), f, align)
            for i, o, f in zip(x.shape[-2:], shape[-2:], factors, strict=True)]
    # Bicubic has no copy case of its own: a dimension is copied where its weights are exactly
    # (0, 1, 0, 0), which a unit scale gives.
    moved = [d for d, a in enumerate(axes) if not (a.scale == 1.0 and a.in_size == a.out_size)]
    x = _source(b, x, 4 ** len(moved), math.prod(shape))
    lead = len(shape) - 2

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        outs = list(idx[lead:])
        sources = {d: cubic_source(k, axes[d], outs[d], align) for d in moved}

        def blend(i: int, pos: list[Expr]) -> str:
            if i == len(moved):
                return k.cast(x.load(k, [*idx[:lead], *pos], mask), "float32")
            d = moved[i]
            indices, weights = sources[d]
            # PyTorch's order: ((w0 * v0 + w1 * v1) + w2 * v2) + w3 * v3, inner dimensions first
            terms = []
            for index, weight in zip(indices, weights, strict=True):
                at = list(pos)
                at[d] = index
                terms.append(f"{weight} * {blend(i + 1, at)}")
            total = k.var(f"{terms[0]} + {terms[1]}", "float32")
            for term in terms[2:]:
                total = k.var(f"{total} + {term}", "float32")
            return total

        return blend(0, outs)

    return Lazy(shape, dtype, fn, (4 ** len(moved)) * (x.cost + 2) + 8)


__all__ = ["Axis", "cubic_source", "linear_axis", "nearest_axis", "nearest_source", "nearest_table"]
