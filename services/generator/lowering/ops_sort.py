"""Sorting along one dimension: sort (and argsort, msort), topk, kthvalue, median, nanmedian.

All of them are one rank kernel: each element's place in the sorted row is the number of
elements of its row that come before it in the order (ties broken by index, so the sort is
stable), counted in a loop over the row in chunks. Each element then writes itself (value
and index) to its place, or, for a selection, only the element whose place is wanted writes.
This is exact for any order and costs n comparisons per element: meant for rows up to a few
thousand elements.

NaN sorts as PyTorch sorts it: above every number (last ascending, first descending), NaNs
among themselves by index.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr, linear, numel
from services.generator.lowering.ir import FLOATS, Buffer, KernelWriter, Stored, Unsupported, Value, compute_dtype
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, out_symbols, pow2
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

# (writer, rank variable, value variable, position along the row, row index symbols,
#  NaN count of the row or "" when not counted) -> stores
Place = Callable[[KernelWriter, str, str, str, list[Expr], str], None]


def _before(k: KernelWriter, vj: str, vi: str, j: str, i: str, descending: bool, dtype: str) -> str:
    """Whether element j comes before element i in the order (strictly)."""
    op = ">" if descending else "<"
    if dtype not in FLOATS:
        return k.var(f"(({vj} {op} {vi}) | (({vj} == {vi}) & ({j} < {i})))", "bool")
    nan_j, nan_i = k.var(f"({vj} != {vj})", "bool"), k.var(f"({vi} != {vi})", "bool")
    # NaN is above every number: it precedes numbers descending and follows them ascending.
    nan_first = f"({nan_j} & ~{nan_i})" if descending else f"(~{nan_j} & {nan_i})"
    tie = f"(({vj} == {vi}) | ({nan_j} & {nan_i}))"
    return k.var(f"(({vj} {op} {vi}) | {nan_first} | ({tie} & ({j} < {i})))", "bool")


def rank_kernel(name: str, src: Value, dim: int, descending: bool, place: Place, outs: list[Buffer],
                count_nan: bool = False) -> Kernel:
    """For every element of ``src``: its rank along ``dim`` in the stable order, handed to
    ``place`` with the element's value and position to write what the operator keeps."""
    k = KernelWriter(name)
    shape = list(src.shape)
    n = shape[dim]
    xn = numel(shape)
    acc = compute_dtype(src.dtype)
    if acc == "bool":
        acc = "int32"
    xb, rb = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    k.line("pid = tl.program_id(0)" + (".to(tl.int64)" if xn >= 2**31 else ""))
    k.line(f"xlin = pid * {xb} + tl.arange(0, {xb})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, shape, "xlin", "x")
    k.aliases[sympy.expand(linear(xs, shape))] = "xlin"
    vi = k.cast(src.load(k, xs, "xmask"), acc)
    pos = k.var(f"({k.index(xs[dim])} + xlin * 0)", "int32")
    k.line(f"count = tl.zeros([{xb}, {rb}], tl.int32)")
    if count_nan:
        k.line(f"nans = tl.zeros([{xb}, {rb}], tl.int32)")
    with k.block(f"for roff in range(0, {n}, {rb}):"):
        k.line(f"rlin = roff + tl.arange(0, {rb})[None, :]")
        k.line(f"mask = xmask & (rlin < {n})")
        r = out_symbols(k, [n], "rlin", "r")[0]
        vj = k.cast(src.load(k, [*xs[:dim], r, *xs[dim + 1:]], "mask"), acc)
        before = _before(k, vj, vi, "rlin", pos, descending, acc)
        k.line(f"count += tl.where(mask & {before}, 1, 0)")
        if count_nan:
            k.line(f"nans += tl.where(mask & ({vj} != {vj}), 1, 0)")
    k.line("rank = tl.sum(count, 1)[:, None]")
    k.dtypes["rank"] = "int32"
    if count_nan:
        k.line("nan_count = tl.sum(nans, 1)[:, None]")
    place(k, "rank", vi, pos, [*xs[:dim], *xs[dim + 1:]], "nan_count" if count_nan else "")
    return Kernel(k, kernel_args(k), *rank_launch(xn, n), outputs=list(outs))


def rank_launch(xn: int, n: int) -> tuple[LaunchShape, LaunchShape]:
    """Elements per program and row chunk: 4096 pairs per step on a GPU, 65536 under the
    interpreter, whose chunks stay at 1024 so that long rows still share a program."""
    gpu_r = min(pow2(n), 128)
    gpu_x = max(1, min(pow2(xn), 4096 // gpu_r))
    cpu_r = min(pow2(n), 1024)
    cpu_x = max(1, min(pow2(xn), 65536 // cpu_r))
    return (LaunchShape((math.ceil(xn / gpu_x),), {"XBLOCK": gpu_x, "RBLOCK": gpu_r}, 4),
            LaunchShape((math.ceil(xn / cpu_x),), {"XBLOCK": cpu_x, "RBLOCK": cpu_r}, 1))


def _dim(value: Any, rank: int) -> int:
    d = int(value)
    return d + max(1, rank) if d < 0 else d


def _as_rows(b: Builder, src: Value) -> Value:
    """The value to rank: stored first when it computes anything (each element is read
    once per element of its row); a 0-d tensor as one element."""
    if src.cost > 1:
        src = b.realize(src, "ranked")
    if src.shape:
        return src
    from services.generator.lowering.ops_views import _reshape

    return _reshape(src, [1])


def _reshaped(value: Value, shape: tuple[int, ...]) -> Value:
    if tuple(value.shape) == tuple(shape):
        return value
    from services.generator.lowering.ops_views import _reshape

    return _reshape(value, list(shape))


def _ordered(b: Builder, node: Node, src: Value, dim: int, descending: bool, keep: int) -> list[Value]:
    """The first ``keep`` elements of each row in order, and their indices (sort, topk)."""
    values_meta, index_meta = node.outputs[0], node.outputs[1]
    assert values_meta is not None and index_meta is not None
    src = _as_rows(b, src)
    shape = list(src.shape)
    out_shape = shape[:dim] + [keep] + shape[dim + 1:]
    values = b.new_buffer(tuple(out_shape), values_meta.dtype, "sorted")
    where = b.new_buffer(tuple(out_shape), index_meta.dtype, "order")

    def place(k: KernelWriter, rank: str, v: str, pos: str, row: list[Expr], nan_count: str) -> None:
        at = k.opaque(rank)
        offset = linear([*row[:dim], at, *row[dim:]], out_shape)
        mask = "xmask" if keep >= shape[dim] else k.var(f"(xmask & ({rank} < {keep}))", "bool")
        k.store(values, offset, v, mask)
        k.store(where, offset, k.var(f"{pos}.to(tl.int64)", "int64"), mask)

    b.emit(rank_kernel(b.kernel_name("sort"), src, dim, descending, place, [values, where]))
    return [_reshaped(Stored(values), tuple(values_meta.shape)), _reshaped(Stored(where), tuple(index_meta.shape))]


@lowers("aten.sort.default", "aten.sort.stable")
def sort(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    """Always stable: a stable order is also a valid answer to an unstable sort."""
    src = args[0]
    if node.target.endswith("stable"):
        dim = kwargs.get("dim", -1)
        descending = bool(kwargs.get("descending", False))
    else:
        dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
        descending = bool(args[2] if len(args) > 2 else kwargs.get("descending", False))
    dim = _dim(dim, len(src.shape))
    if src.numel == 0:
        raise Unsupported("sorting an empty tensor")
    n = src.shape[dim] if src.shape else 1
    return _ordered(b, node, src, dim, descending, n)


@lowers("aten.topk.default")
def topk(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    """The k largest (smallest) in order, ties by index; NaN counts as the largest."""
    src, count = args[0], int(args[1])
    dim = _dim(args[2] if len(args) > 2 else kwargs.get("dim", -1), len(src.shape))
    largest = bool(args[3] if len(args) > 3 else kwargs.get("largest", True))
    if count == 0 or src.numel == 0:
        raise Unsupported("topk with k = 0 or of an empty tensor")
    return _ordered(b, node, src, dim, largest, count)


def _select(b: Builder, node: Node, src: Value, dim: int, which: Callable[[KernelWriter, str, int], str],
            count_nan: bool) -> list[Value]:
    """The element of each row whose ascending rank is ``which(k, nan_count, n)``, and its index."""
    values_meta = node.outputs[0]
    index_meta = node.outputs[1] if len(node.outputs) > 1 else None
    assert values_meta is not None
    src = _as_rows(b, src)
    shape = list(src.shape)
    n = shape[dim]
    rows = shape[:dim] + shape[dim + 1:]
    values = b.new_buffer(tuple(rows), values_meta.dtype, "selected")
    where = b.new_buffer(tuple(rows), index_meta.dtype, "selected_at") if index_meta is not None else None

    def place(k: KernelWriter, rank: str, v: str, pos: str, row: list[Expr], nan_count: str) -> None:
        target = which(k, nan_count, n)
        mask = k.var(f"(xmask & ({rank} == {target}))", "bool")
        offset = linear(row, rows)
        _store(k, values, offset, v, mask)
        if where is not None:
            _store(k, where, offset, k.var(f"{pos}.to(tl.int64)", "int64"), mask)

    outs = [values] + ([where] if where is not None else [])
    b.emit(rank_kernel(b.kernel_name("select"), src, dim, False, place, outs, count_nan))
    result = [_reshaped(Stored(values), tuple(values_meta.shape))]
    if where is not None and index_meta is not None:
        result.append(_reshaped(Stored(where), tuple(index_meta.shape)))
    return result


def _store(k: KernelWriter, buf: Buffer, offset: Expr, value: str, mask: str) -> None:
    """A masked store of a block; a fixed offset (a selection into a 0-d result) is spread
    over the block's lanes, since Triton stores a block only through a block of pointers."""
    if sympy.sympify(offset).is_Integer:
        k.line(f"tl.store({k.pointer(buf)} + {int(offset)} + xlin * 0, {k.cast(value, buf.dtype)}, mask={mask})")
    else:
        k.store(buf, offset, value, mask)


@lowers("aten.kthvalue.default")
def kthvalue(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    """The k-th smallest (1-based); NaN counts as the largest."""
    src, kth = args[0], int(args[1])
    dim = _dim(args[2] if len(args) > 2 else kwargs.get("dim", -1), len(src.shape))
    n = src.shape[dim] if src.shape else 1
    if not 1 <= kth <= n:
        raise Unsupported(f"kthvalue with k={kth} outside 1..{n}")
    return _select(b, node, src, dim, lambda k, nans, size: str(kth - 1), False)


def _median_rank(k: KernelWriter, nans: str, n: int) -> str:
    """The lower median; a row with NaN gives its first NaN (PyTorch's median is NaN then)."""
    return k.var(f"tl.where({nans} > 0, {n} - {nans}, {(n - 1) // 2})", "int32")


def _nanmedian_rank(k: KernelWriter, nans: str, n: int) -> str:
    """The lower median of the numbers; a row of NaNs only gives its first."""
    return k.var(f"tl.maximum(({n} - {nans} - 1) // 2, 0)", "int32")


@lowers("aten.median.dim", "aten.median.default", "aten.nanmedian.dim", "aten.nanmedian.default")
def median(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value] | Value:
    src = args[0]
    which = _nanmedian_rank if "nanmedian" in node.target else _median_rank
    if src.numel == 0:
        raise Unsupported("the median of an empty tensor")
    if node.target.endswith(".default"):
        from services.generator.lowering.ops_views import _reshape

        return _select(b, node, _reshape(src, [src.numel]), 0, which, True)[0]
    dim = _dim(args[1] if len(args) > 1 else kwargs.get("dim", -1), len(src.shape))
    return _select(b, node, src, dim, which, True)


@lowers("aten.mode.default")
def mode(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> None:
    raise Unsupported("torch.mode (aten.mode) has no kernel lowering: it needs the count of every distinct "
                      "value of a row")
