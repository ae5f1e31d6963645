"""Pooling: max pools (values and indices), average pools and adaptive pools over 1 to 3
spatial dimensions (1-d pools arrive as 2-d ones with a unit height).

A pooled value is lazy: reading element o walks o's window in a loop inside whichever
kernel reads it, so a pool fuses with the pointwise work before it (a batch norm and ReLU)
and after it, and its indices cost nothing unless something reads them. Each window is
walked in PyTorch's order with PyTorch's rules, so results match it exactly:

* max: the running maximum is replaced by a larger value or by NaN (a later NaN replaces an
  earlier one); the index starts at the window's first position inside the input, so a
  window of -inf reports that position; padding is never read;
* average: the divisor is ``divisor_override``, else the window clipped to the padded input
  (``count_include_pad``), else the window clipped to the input; an empty window gives 0;
* adaptive: output o pools [floor(o * In / Out), ceil((o + 1) * In / Out)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from services.generator.lowering import ops_upsample  # noqa: F401 - registers the resampling lowerings
from services.generator.lowering.indexing import Expr, FloorDiv, bounds, delinearize, linear, range_symbol
from services.generator.lowering.ir import FLOATS, KernelWriter, Lazy, Unsupported, Value, and_masks
from services.generator.lowering.kernels import rounded
from services.generator.lowering.ops_pointwise import out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.rows import ReductionValue
from services.generator.lowering.schema import Node

# A lazy input is stored before pooling when recomputing it at every extra read of an
# element would cost more than this many operators per element.
RECOMPUTE_BUDGET = 4


@dataclass(frozen=True)
class Window:
    """Which input positions output position o pools, per spatial dimension d.

    Fixed windows start at o * stride - padding and step by dilation ``counts[d]`` times;
    adaptive windows start at floor(o * In / Out), end before ceil((o + 1) * In / Out) and
    are walked up to the longest window's length."""

    in_size: tuple[int, ...]
    out_size: tuple[int, ...]
    counts: tuple[int, ...]
    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    adaptive: bool = False

    @property
    def volume(self) -> int:
        return math.prod(self.counts)

    def start(self, d: int, o: Expr) -> Expr:
        if self.adaptive:
            return FloorDiv(o * self.in_size[d], self.out_size[d])
        return o * self.stride[d] - self.padding[d]

    def end(self, d: int, o: Expr) -> Expr:
        """Adaptive windows only: the exclusive end."""
        return FloorDiv((o + 1) * self.in_size[d] + self.out_size[d] - 1, self.out_size[d])

    def step(self, d: int) -> int:
        return 1 if self.adaptive else self.dilation[d]

    def ragged(self, d: int) -> bool:
        """Whether adaptive windows along d differ in length (so the walk needs a bound)."""
        return self.adaptive and self.in_size[d] % self.out_size[d] != 0


def adaptive_window(in_size: Sequence[int], out_size: Sequence[int]) -> Window:
    counts = tuple(max(-(-(o + 1) * i // n) - (o * i // n) for o in range(n)) if n > 0 else 1
                   for i, n in zip(in_size, out_size, strict=True))
    return Window(tuple(in_size), tuple(out_size), counts, adaptive=True)


def tile_zero(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
    """An int32 zero shaped like the reading kernel's index tile (and mask).

    A loop-carried accumulator must keep one shape across iterations, and a lazy loader
    does not know the tile shape of the kernel it is inlined into: it takes it from there."""
    terms = [k.index(i) for i in idx if not sympy.sympify(i).is_Integer]
    code = "tl.zeros([1], tl.int32)" + (f" + ({' + '.join(terms)}) * 0" if terms else "")
    if mask:
        code = f"tl.where({mask}, {code}, 0)"
    return k.var(code, "int32")


# Windows of at most this many offsets (a 3x3x3 cube) are unrolled.
UNROLL_WINDOW = 27


def walk(k: KernelWriter, win: Window, x: Value, lead: Sequence[Expr], outs: Sequence[Expr], mask: str | None,
         visit: Callable[[str, list[Expr], str | None], None]) -> None:
    """Walks every window offset in a loop; ``visit(value, position, inside)`` receives the
    input value (float32, 0 outside), its spatial position and the condition (code, None
    when always true) that the position is in the input and in the window."""
    name = k.fresh("kk")
    offset = range_symbol(f"{name}_{k.name}", win.volume)
    k.names[offset] = name
    offsets = delinearize(offset, win.counts)
    # A small fixed window is unrolled: its offsets become constants (no division per offset)
    # and its loads are independent instructions the GPU keeps in flight together, as Inductor
    # unrolls them. On an H200 (2026-11-28) that took 16 fixed-window pooling specs 1.052x
    # faster (geomean; 0.91x to 1.41x), while adaptive windows went both ways (0.63x,
    # 1.46x): they and large windows stay a loop.
    small = win.volume <= UNROLL_WINDOW and not win.adaptive
    loop = "tl.static_range" if small else "range"
    with k.block(f"for {name} in {loop}({win.volume}):"):
        pos: list[Expr] = []
        conds: list[str] = []
        for d, (o, kk) in enumerate(zip(outs, offsets, strict=True)):
            at = win.start(d, o) + kk * win.step(d)
            lo, hi = bounds(at)
            if lo < 0:
                conds.append(f"({k.index(at)} >= 0)")
            if hi >= win.in_size[d]:
                conds.append(f"({k.index(at)} < {win.in_size[d]})")
            if win.ragged(d):
                conds.append(f"({k.index(at)} < {k.index(win.end(d, o))})")
            pos.append(at)
        inside = k.var(" & ".join(conds), "bool") if conds else None
        v = k.cast(x.load(k, [*lead, *pos], and_masks(mask, inside)), "float32")
        if inside is not None:
            v = k.var(f"tl.where({inside}, {v}, 0.0)", "float32")
        visit(v, pos, inside)


def _spatial(win: Window, idx: Sequence[Expr]) -> tuple[list[Expr], list[Expr]]:
    lead = len(idx) - len(win.in_size)
    return list(idx[:lead]), list(idx[lead:])


def _window_input(b: Builder, x: Value, win: Window, out_numel: int) -> Value:
    """``x`` stored first when the windows overlap enough that recomputing it costs more."""
    reads = out_numel * win.volume / max(1, x.numel)
    if x.cost * (reads - 1) > RECOMPUTE_BUDGET:
        return b.realize(x, "pool_in")
    return x


# Windows of at least this many elements, each wholly inside the input, are reduced as rows
# (a block of windows per program, the window's elements in parallel) instead of walked one
# element at a time by each output's lane: a global or adaptive pool of few, large windows
# had a handful of lanes each walking thousands of elements.
ROW_WINDOW = 64
# Windows whose starts lie at least this many elements apart along the innermost dim, over
# at least as many elements there, are rows too: walked lane by lane, a warp's load touches a
# sector per lane and uses one element of it (an adaptive 1-d max pool of 1000 to 64 ran at
# 0.09x torch.compile on an H200), while as rows the lanes of a window read it contiguously.
ROW_STEP = 8


def _innermost_step(win: Window) -> float:
    """How far apart neighbouring windows start along the innermost dim, in elements."""
    if win.adaptive:
        return win.in_size[-1] / max(1, win.out_size[-1])
    return float(win.stride[-1])


def _as_rows(b: Builder, x: Value, win: Window, shape: Sequence[int], kind: str) -> ReductionValue | None:
    """``kind`` (amax or sum) over each window, as a reduction of ``x``'s windows laid out as
    trailing dims; None when windows are small and close together, or reach outside the
    input. A ragged adaptive window's positions past its end read the reduction's identity."""
    wide = win.counts[-1] >= ROW_STEP and _innermost_step(win) >= ROW_STEP
    if win.volume < ROW_WINDOW and not wide:
        return None
    for d in range(len(win.in_size)):
        if not win.adaptive:
            last = (win.out_size[d] - 1) * win.stride[d] - win.padding[d] + (win.counts[d] - 1) * win.dilation[d]
            if win.padding[d] != 0 or last >= win.in_size[d]:
                return None
    rank = len(win.in_size)
    identity = "float('-inf')" if kind == "amax" else "0.0"

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        lead, outs, offsets = idx[:-2 * rank], idx[-2 * rank:-rank], idx[-rank:]
        pos = [win.start(d, o) + kk * win.step(d) for d, (o, kk) in enumerate(zip(outs, offsets, strict=True))]
        ends = [f"({k.index(at)} < {k.index(win.end(d, o))})"
                for d, (o, at) in enumerate(zip(outs, pos, strict=True)) if win.ragged(d)]
        if not ends:
            return x.load(k, [*lead, *pos], mask)
        inside = k.var(" & ".join(ends), "bool")
        v = x.load(k, [*lead, *pos], and_masks(mask, inside))
        return k.var(f"tl.where({inside}, {v}, {identity})", x.dtype)

    windows = Lazy((*shape, *win.counts), x.dtype, fn, x.cost)
    dims = list(range(len(shape), len(shape) + rank))
    return ReductionValue(b, windows, dims, kind, shape, x.dtype if kind == "amax" else "float32")


def max_pool(x: Value, win: Window, shape: Sequence[int], dtype: str, b: Builder) -> list[Value]:
    """(values, int64 indices into each input plane) of a max pool over ``win``: lazy walks of
    each window, the values a reduction of rows where the windows are large."""
    cost = win.volume * (x.cost + 3)

    def first_position(k: KernelWriter, zero: str, outs: Sequence[Expr]) -> str:
        """The window's first position inside the input, as PyTorch starts its index."""
        flat = None
        for d, o in enumerate(outs):
            start = k.var(f"({zero} + {k.index(win.start(d, o))})", "int32")
            step = win.step(d)
            if not win.adaptive:
                # the first start + i * step >= 0
                first = (f"tl.maximum({start}, 0)" if step == 1 else
                         f"tl.where({start} < 0, {start} + ((-{start} + {step - 1}) // {step}) * {step}, "
                         f"{start})")
                start = k.var(first, "int32")
            flat = start if flat is None else k.var(f"{flat} * {win.in_size[d]} + {start}", "int32")
        assert flat is not None
        return k.var(f"{flat}.to(tl.int64)", "int64")

    def run(k: KernelWriter, idx: Sequence[Expr], mask: str | None, with_index: bool) -> tuple[str, str]:
        lead, outs = _spatial(win, idx)
        zero = tile_zero(k, idx, mask)
        best, at = k.fresh("best"), k.fresh("best_at")
        k.line(f"{best} = {zero}.to(tl.float32) + float('-inf')")
        if with_index:
            k.line(f"{at} = {first_position(k, zero, outs)}")

        def visit(v: str, pos: list[Expr], inside: str | None) -> None:
            take = f"({v} > {best}) | ({v} != {v})"
            take = k.var(f"{inside} & ({take})" if inside else take, "bool")
            k.line(f"{best} = tl.where({take}, {v}, {best})")
            if with_index:
                k.line(f"{at} = tl.where({take}, {k.index(linear(pos, win.in_size))}, {at})")

        walk(k, win, x, lead, outs, mask, visit)
        k.dtypes[best], k.dtypes[at] = "float32", "int64"
        return best, at

    rows = _as_rows(b, x, win, shape, "amax")
    # amax keeps a NaN as the walk does; a maximum is the same whatever the order.
    values = rows if rows is not None else Lazy(shape, dtype, lambda k, idx, mask: run(k, idx, mask, False)[0], cost)
    indices = Lazy(shape, "int64", lambda k, idx, mask: run(k, idx, mask, True)[1], cost)
    return [values, indices]


def _pool_args(args: list[Any], kwargs: dict[str, Any], names: Sequence[str],
               defaults: Sequence[Any]) -> list[Any]:
    """The operator's arguments after the input, positional or by name, defaults for the rest."""
    out = []
    for i, (name, default) in enumerate(zip(names, defaults, strict=True)):
        value = args[i] if i < len(args) else kwargs.get(name, default)
        out.append(default if value is None else value)
    return out


def _ints(value: Any, rank: int, default: Sequence[int]) -> tuple[int, ...]:
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    if not values:
        return tuple(default)
    return tuple(values * rank if len(values) == 1 else values)


def _float_input(node: Node, x: Value) -> None:
    if x.dtype not in FLOATS:
        raise Unsupported(f"{node.target} of a {x.dtype} tensor")


@lowers("aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default")
def max_pool_with_indices(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    x = args[0]
    _float_input(node, x)
    rank = 3 if "3d" in node.target else 2
    kernel, stride, padding, dilation, _ceil = _pool_args(
        args[1:], kwargs, ["kernel_size", "stride", "padding", "dilation", "ceil_mode"],
        [None, [], 0, 1, False])
    kernel = _ints(kernel, rank, ())
    shape, dtype = out_meta(node)
    win = Window(tuple(x.shape[-rank:]), tuple(shape[-rank:]), kernel, _ints(stride, rank, kernel),
                 _ints(padding, rank, (0,) * rank), _ints(dilation, rank, (1,) * rank))
    return max_pool(_window_input(b, x, win, math.prod(shape)), win, shape, dtype, b)


@lowers("aten.adaptive_max_pool2d.default", "aten.adaptive_max_pool3d.default")
def adaptive_max_pool(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    x = args[0]
    _float_input(node, x)
    rank = 3 if "3d" in node.target else 2
    shape, dtype = out_meta(node)
    win = adaptive_window(x.shape[-rank:], shape[-rank:])
    return max_pool(_window_input(b, x, win, math.prod(shape)), win, shape, dtype, b)


def _average(x: Value, win: Window, shape: Sequence[int], dtype: str,
             divisor: Callable[[KernelWriter, str, list[Expr]], tuple[list[str], str | None]],
             b: Builder) -> Lazy:
    """Lazy window sums over ``win`` divided by ``divisor(k, zero, outs)``: (float divisors,
    applied in turn as PyTorch does, and the condition under which the window is not empty,
    None when it never is). Large windows inside the input are summed as rows."""
    rows = _as_rows(b, x, win, shape, "sum")
    if rows is not None:
        def mean(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
            total = k.cast(rows.load(k, idx, mask), "float32")
            zero = tile_zero(k, idx, mask)
            divisors, _nonempty = divisor(k, zero, _spatial(win, idx)[1])  # no window is empty here
            for div in divisors:
                total = k.var(f"{total} / {div}", "float32")
            return rounded(k, total, dtype)

        return Lazy(shape, dtype, mean, 2)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        lead, outs = _spatial(win, idx)
        zero = tile_zero(k, idx, mask)
        total = k.fresh("total")
        k.line(f"{total} = {zero}.to(tl.float32)")
        walk(k, win, x, lead, outs, mask, lambda v, pos, inside: k.line(f"{total} = {total} + {v}"))
        k.dtypes[total] = "float32"
        divisors, nonempty = divisor(k, zero, outs)
        mean = total
        for div in divisors:
            mean = k.var(f"{mean} / {div}", "float32")
        return mean if nonempty is None else k.var(f"tl.where({nonempty}, {mean}, 0.0)", "float32")

    return Lazy(shape, dtype, fn, win.volume * (x.cost + 1) + 1)


@lowers("aten.avg_pool2d.default", "aten.avg_pool3d.default")
def avg_pool(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    _float_input(node, x)
    rank = 3 if "3d" in node.target else 2
    kernel, stride, padding, _ceil, include_pad, override = _pool_args(
        args[1:], kwargs,
        ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"],
        [None, [], 0, False, True, None])
    kernel = _ints(kernel, rank, ())
    shape, dtype = out_meta(node)
    win = Window(tuple(x.shape[-rank:]), tuple(shape[-rank:]), kernel, _ints(stride, rank, kernel),
                 _ints(padding, rank, (0,) * rank), (1,) * rank)

    def divisor(k: KernelWriter, zero: str, outs: list[Expr]) -> tuple[list[str], str | None]:
        # PyTorch: the window [start, min(start + k, In + pad)) counts with its padding;
        # clipped to [0, In) it is the part that holds input.
        padded, clipped, conds = [], [], []
        for d, o in enumerate(outs):
            start = k.var(f"({zero} + {k.index(win.start(d, o))})", "int32")
            end = k.var(f"tl.minimum({start} + {kernel[d]}, {win.in_size[d] + win.padding[d]})", "int32")
            padded.append(k.var(f"({end} - {start})", "int32"))
            count = k.var(f"(tl.minimum({end}, {win.in_size[d]}) - tl.maximum({start}, 0))", "int32")
            clipped.append(count)
            conds.append(f"({count} > 0)")
        nonempty = k.var(" & ".join(conds), "bool")
        if override is not None:
            return [f"{float(int(override))!r}"], nonempty
        sizes = padded if include_pad else clipped
        return [k.var(f"({' * '.join(sizes)}).to(tl.float32)", "float32")], nonempty

    return _average(_window_input(b, x, win, math.prod(shape)), win, shape, dtype, divisor, b)


@lowers("aten._adaptive_avg_pool2d.default", "aten._adaptive_avg_pool3d.default")
def adaptive_avg_pool(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    _float_input(node, x)
    rank = 3 if "3d" in node.target else 2
    shape, dtype = out_meta(node)
    win = adaptive_window(x.shape[-rank:], shape[-rank:])

    def divisor(k: KernelWriter, zero: str, outs: list[Expr]) -> tuple[list[str], str | None]:
        # PyTorch divides by each dimension's window length in turn.
        divisors = []
        for d, o in enumerate(outs):
            if not win.ragged(d):
                divisors.append(f"{float(win.counts[d])!r}")
                continue
            length = k.index(win.end(d, o) - win.start(d, o))
            divisors.append(k.var(f"({zero} + {length}).to(tl.float32)", "float32"))
        return divisors, None

    return _average(_window_input(b, x, win, math.prod(shape)), win, shape, dtype, divisor, b)


__all__ = ["Window", "adaptive_window", "max_pool", "tile_zero", "walk"]
