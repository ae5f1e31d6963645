"""Reductions over any set of dimensions: sum, prod, amax, amin, var, argmax, argmin.

Each is one kernel: a block of output elements per program, the reduced elements walked in
chunks. The value reduced is read through its loader, so the pointwise work before a
reduction (a softmax's exp, a norm's square) is computed inside the reduction's loop.
Floating sums accumulate in float32 (float64 for float64), as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr, linear, numel
from services.generator.lowering.ir import FLOATS, KernelWriter, Stored, Unsupported, Value, compute_dtype
from services.generator.lowering.kernels import Kernel, kernel_args, out_symbols, reduction_launch, tl_type
from services.generator.lowering.rows import (ReductionValue, _highest, _lowest, largest_read, memory_run,
                                              probe_symbols, reads, same_index)
from services.generator.lowering.ops_pointwise import out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node


def _dims(dims: Any, rank: int) -> list[int]:
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d + rank if d < 0 else d for d in dims})


def _split(shape: Sequence[int], dims: Sequence[int]) -> tuple[list[int], list[int]]:
    kept = [s for d, s in enumerate(shape) if d not in dims]
    reduced = [s for d, s in enumerate(shape) if d in dims]
    return kept, reduced


def _merge(rank: int, dims: Sequence[int], xs: Sequence[Expr], rs: Sequence[Expr]) -> list[Expr]:
    xi, ri = iter(xs), iter(rs)
    return [next(ri) if d in dims else next(xi) for d in range(rank)]


def _reduce(b: Builder, node: Node, src: Value, dims: list[int], kind: str, out_dtype: str) -> Value:
    shape = out_meta(node)[0]
    if not dims:
        return src
    if src.numel == 0:
        raise Unsupported(f"{node.target} over an empty tensor")
    return _by_rows(b, ReductionValue(b, src, dims, kind, shape, out_dtype))


# Reductions whose result over a set of elements is the same reduction of its results over
# parts of it (a variance is not: its parts' means differ).
_NESTS = ("sum", "prod", "amax", "amin")


def _by_rows(b: Builder, r: ReductionValue) -> ReductionValue:
    """``r`` reduced row by row first, where its value reads statistics of its own rows: a
    distillation loss sums, over all elements, terms that read each row's two log-softmax
    statistics. As one reduction of the whole tensor it is a kernel of its own, split
    across programs, that reads every element again and fetches each row's statistics per
    element; reduced over each row (``inner``), it is one more reduction of the same rows,
    which the row program computing the statistics computes too (``chain_inputs``), and
    the rows' totals are reduced after (``outer``). Floating reductions without keepdim only:
    the sum's order changes as any split's does."""
    src = r.src
    if r.kind not in _NESTS or r.acc not in FLOATS or len(r.shape) != len(r.kept):
        return r
    shape = tuple(src.shape)
    syms = probe_symbols(shape)
    rows: list[int] | None = None
    for dep, index in reads(src):
        kept_syms = [syms[d] for d in range(len(shape)) if d not in dep.dims]
        if (tuple(dep.src.shape) == shape and set(dep.dims) < set(r.dims) and dep.splits == 1
                and same_index(dep.row_index(index), kept_syms)):
            if rows is None or len(dep.dims) > len(rows):
                rows = list(dep.dims)
    if rows is None:
        return r
    kept_shape = [s for d, s in enumerate(shape) if d not in rows]
    inner = ReductionValue(b, src, rows, r.kind, kept_shape, r.acc)
    if inner.splits > 1:
        return r
    # The dims ``r`` reduces beyond the rows, numbered as the inner result's dims.
    inner_dims = [d for d in range(len(shape)) if d not in rows]
    remaining = [i for i, d in enumerate(inner_dims) if d in r.dims]
    return ReductionValue(b, inner, remaining, r.kind, r.shape, r.dtype)


# The captured reductions (their dims are args[1]); a row program computes those over a value's
# trailing dims in the kernel that reads them.
ROW_REDUCTIONS = frozenset(["prims.sum.default", "prims.prod.default", "prims.amax.default", "prims.amin.default",
                            "prims.var.default"])


@lowers("prims.sum.default", "prims.prod.default", "prims.amax.default", "prims.amin.default",
        "aten.sum.dim_IntList", "aten.amax.default", "aten.amin.default", "aten.prod.dim_int")
def reduce_(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    kind = node.target.split(".")[1]
    shape, dtype = out_meta(node)
    dims = _dims(args[1] if len(args) > 1 else kwargs.get("dims"), len(src.shape))
    return _reduce(b, node, src, dims, kind, dtype)


@lowers("prims.var.default")
def var(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """Two passes over each row: the mean, then the mean squared deviation from it."""
    src = args[0]
    shape, dtype = out_meta(node)
    dims = _dims(args[1] if len(args) > 1 else kwargs.get("dims"), len(src.shape))
    correction = float(args[2] if len(args) > 2 else kwargs.get("correction", 1.0) or 0.0)
    if src.numel == 0:
        raise Unsupported(f"{node.target} over an empty tensor")
    return ReductionValue(b, src, dims, "var", shape, dtype, correction)


@lowers("aten.argmax.default", "aten.argmin.default")
def arg_reduce(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """The first index of the largest (smallest) value; NaN counts as largest, as in PyTorch."""
    return _arg_kernel(b, node, args, kwargs)[0]


def _arg_kernel(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any],
                values_dtype: str | None = None) -> tuple[Value, Value | None]:
    """The arg reduction's kernel; with ``values_dtype``, it also stores the extreme values it
    found (``max.dim``'s values: NaN where a row has one), in the same walk."""
    src = args[0]
    kind = "max" if "argmax" in node.target else "min"
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    shape, dtype = out_meta(node)
    rank = len(src.shape)
    if dim is None:
        from services.generator.lowering.ops_views import _reshape

        src, dims = _reshape(src, [src.numel]), [0]
        rank = 1
    else:
        dims = _dims(int(dim), rank)
    kept, reduced = _split(src.shape, dims)
    acc = compute_dtype(src.dtype)
    out = b.new_buffer(tuple(shape), dtype, "arg" + kind)
    big = 2**62
    better = ">" if kind == "max" else "<"
    # Written out here: two accumulators per lane (best value, its first position).
    k = KernelWriter(b.kernel_name("arg" + kind))
    xn, rnum = numel(kept), numel(reduced)
    xb, rb = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    k.line("pid = tl.program_id(0)")
    k.line(f"xlin = pid * {xb} + tl.arange(0, {xb})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, kept, "xlin", "x")
    init = _lowest(acc) if kind == "max" else _highest(acc)
    k.line(f"best = tl.full([{xb}, {rb}], {init}, {tl_type(acc)})")
    k.line(f"best_at = tl.full([{xb}, {rb}], {big}, tl.int64)")
    k.line(f"nan_at = tl.full([{xb}, {rb}], {big}, tl.int64)")
    with k.block(f"for roff in range(0, {rnum}, {rb}):"):
        k.line(f"rlin = roff + tl.arange(0, {rb})[None, :]")
        k.line("mask = xmask & (rlin < %d)" % rnum)
        rs = out_symbols(k, reduced, "rlin", "r")
        k.aliases[sympy.expand(linear([*xs, *rs], [*kept, *reduced]))] = f"(xlin * {rnum} + rlin)"
        v = k.cast(src.load(k, _merge(rank, dims, xs, rs), "mask"), acc)
        k.line("pos = (rlin + xlin * 0).to(tl.int64)")
        if acc in FLOATS:
            k.line(f"nan_at = tl.where(mask & ({v} != {v}) & (pos < nan_at), pos, nan_at)")
        k.line(f"take = mask & (({v} {better} best) | (({v} == best) & (pos < best_at)))")
        k.line(f"best = tl.where(take, {v}, best)")
        k.line("best_at = tl.where(take, pos, best_at)")
    fold = "tl.max" if kind == "max" else "tl.min"
    k.line(f"top = {fold}(best, 1)[:, None]")
    k.line(f"first = tl.min(tl.where(best == top, best_at, {big}), 1)[:, None]")
    k.line(f"first_nan = tl.min(nan_at, 1)[:, None]")
    k.line(f"result = tl.where(first_nan < {big}, first_nan, first)")
    k.line(f"tl.store({k.pointer(out)} + xlin, result.to({tl_type(dtype)}), mask=xmask)")
    outputs = [out]
    if values_dtype is not None:
        values = b.new_buffer(tuple(shape), values_dtype, kind)
        top = f"tl.where(first_nan < {big}, float('nan'), top)" if acc in FLOATS else "top"
        k.line(f"tl.store({k.pointer(values)} + xlin, ({top}).to({tl_type(values_dtype)}), mask=xmask)")
        outputs.append(values)
    run = memory_run(src, dims, largest_read(src))
    b.emit(Kernel(k, kernel_args(k), *reduction_launch(xn, rnum, run), outputs=outputs))
    return Stored(out), Stored(outputs[1]) if values_dtype is not None else None


@lowers("aten.max.default", "aten.min.default")
def extreme(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``x.max()``, ``x.min()``: the extreme of every element, NaN where there is one (as
    ``amax``/``amin`` over every dim, which PyTorch's tables do not rewrite them to)."""
    src = args[0]
    shape, dtype = out_meta(node)
    kind = "amax" if ".max." in node.target else "amin"
    return _reduce(b, node, src, list(range(len(src.shape))), kind, dtype)


@lowers("aten.max.dim", "aten.min.dim")
def max_dim(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    """Values and first indices of the extreme along one dim: one walk finds both (the arg
    reduction's kernel keeps the best value of each lane beside its position)."""
    src, dim = args[0], int(args[1])
    keepdim = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
    kind = "max" if ".max." in node.target else "min"
    values_meta, index_meta = node.outputs
    assert values_meta is not None and index_meta is not None
    dims = _dims(dim, len(src.shape))
    if not b.reads_output(node.name, 1):
        # Only the values are read: a reduction like any other, which a row program that
        # reads it (``x - x.max(-1, keepdim=True)[0]``) computes in its own kernel.
        values_node = Node(name=node.name + "_values", target=f"prims.a{kind}.default", args=[],
                           outputs=[values_meta])
        return [_reduce(b, values_node, src, dims, "a" + kind, values_meta.dtype)]
    if src.numel == 0:
        raise Unsupported(f"{node.target} over an empty tensor")
    index_node = Node(name=node.name + "_index", target=f"aten.arg{kind}.default", args=[],
                      outputs=[index_meta])
    index, values = _arg_kernel(b, index_node, [src, dim, keepdim], {}, values_meta.dtype)
    assert values is not None
    return [values, index]
