"""Writing by index: scatter, scatter_add, scatter_reduce, index_reduce, index_put,
index_add, masked_scatter.

A scatter is two kernels: the input is copied into the output buffer, then a second kernel
walks the written elements (the index's shape) and stores each at the place its index
names, or combines it there atomically (sum, max, min). A reduction without the input's own
value first resets the places written to the reduction's identity (a third kernel, storing
the identity wherever an index points). Products have no atomic operation: they gather
instead, each output element multiplying the elements whose index names it (see
:func:`_scatter_prod`).

Atomic sums of 16-bit floats and of narrow integers accumulate in float32 / int32 (Triton
has no atomics of those types) and are rounded when read. Duplicate indices in a plain
store (scatter, index_put without accumulate) leave one of the written values, as on a GPU
in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr, delinearize, linear, numel, range_symbol
from services.generator.lowering.ir import (FLOATS, Buffer, KernelWriter, Lazy, Stored, Unsupported, Value,
                                           and_masks, compute_dtype)
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, out_symbols, pow2
from services.generator.lowering.ops_pointwise import literal, out_meta, scalar_code
from services.generator.lowering.ops_scan import highest, lowest
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node


@dataclass
class Write:
    """One store of a scatter kernel: ``value`` to ``target`` at ``offset``, plainly
    (``mode`` "store") or by an atomic operation ("add", "max", "min")."""

    target: Buffer
    offset: Expr
    value: str
    mode: str = "store"
    mask: str | None = None


Place = Callable[[KernelWriter, list[Expr], str], list[Write]]


def scatter_kernel(name: str, domain: Sequence[int], place: Place) -> Kernel:
    """For every element ``i`` of ``domain`` (in flat order), the writes ``place`` names."""
    k = KernelWriter(name)
    n = max(1, numel(domain))
    block = k.constexpr("BLOCK")
    k.line("pid = tl.program_id(0)" + (".to(tl.int64)" if n >= 2**31 else ""))
    k.line(f"xlin = pid * {block} + tl.arange(0, {block})")
    k.line(f"xmask = xlin < {n}")
    idx = out_symbols(k, domain, "xlin", "x")
    k.aliases[sympy.expand(linear(idx, domain))] = "xlin"
    outputs: list[Buffer] = []
    for w in place(k, idx, "xmask"):
        ptr = k.pointer(w.target)
        offset = sympy.sympify(w.offset)
        where = k.index(offset) + (" + xlin * 0" if offset.is_Integer else "")
        value = k.cast(w.value, w.target.dtype)
        mask = and_masks("xmask", w.mask)
        if w.mode == "store":
            k.line(f"tl.store({ptr} + {where}, {value}, mask={mask})")
        else:
            k.line(f"tl.atomic_{w.mode}({ptr} + {where}, {value}, mask={mask}, sem=\"relaxed\")")
        if w.target not in outputs:
            outputs.append(w.target)
    gpu, cpu = min(1024, pow2(n)), min(16384, pow2(n))
    return Kernel(k, kernel_args(k), LaunchShape((math.ceil(n / gpu),), {"BLOCK": gpu}, 4),
                  LaunchShape((math.ceil(n / cpu),), {"BLOCK": cpu}, 1), outputs)


def accumulator_dtype(dtype: str, op: str) -> str:
    """The type atomics combine ``dtype`` values in: Triton has atomics of 32- and 64-bit
    types only (16-bit float adds exist but round every step)."""
    if dtype == "bool":
        raise Unsupported(f"{op} of boolean values (no atomic operation combines them)")
    if dtype in ("float16", "bfloat16"):
        return "float32"
    if dtype in ("int8", "int16", "uint8"):
        return "int32"
    return dtype


def _copy(b: Builder, value: Value, dtype: str, hint: str, sticky_nan: str = "") -> Buffer:
    """A fresh buffer of ``dtype`` holding ``value``; with ``sticky_nan`` ("max" or "min")
    NaNs are rewritten to the NaN that atomic max (min) keeps (see :func:`_sticky_nan`)."""
    buf = b.new_buffer(tuple(value.shape), dtype, hint)
    if sticky_nan and dtype in FLOATS:
        src = value
        work = compute_dtype(dtype)

        def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
            return _sticky_nan(k, k.cast(src.load(k, idx, mask), work), work, sticky_nan)

        value = Lazy(value.shape, dtype, fn, value.cost + 1)
    b.fill(buf, value)
    return buf


def _sticky_nan(k: KernelWriter, v: str, dtype: str, op: str) -> str:
    """``v`` with NaNs replaced by the quiet NaN whose bits win Triton's float atomic max
    (positive: it compares as the largest signed integer among floats) or min (negative:
    the largest unsigned one), so that a NaN, once written, stays, as PyTorch propagates it."""
    bits = {("float32", "max"): ("0x7FC00000", "uint32"), ("float32", "min"): ("0xFFC00000", "uint32"),
            ("float64", "max"): ("0x7FF8000000000000", "uint64"),
            ("float64", "min"): ("0xFFF8000000000000", "uint64")}[(dtype, op)]
    nan = k.var(f"tl.full([1], {bits[0]}, tl.{bits[1]}).to(tl.{dtype}, bitcast=True)", dtype)
    return k.var(f"tl.where({v} != {v}, {nan}, {v})", dtype)


def rounded(buf: Buffer, dtype: str) -> Value:
    """An accumulator read back as ``dtype``: 16-bit floats and narrow integers are rounded
    (wrapped) to the type the graph expects, in the compute type readers use."""
    stored = Stored(buf)
    if buf.dtype == dtype:
        return stored
    work = compute_dtype(dtype)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        v = stored.load(k, idx, mask)
        narrow = k.var(f"{v}.to(tl.{dtype})", dtype)
        return k.cast(narrow, work)

    return Lazy(buf.shape, dtype, fn, 1)


def _along(dim: int, idx: Sequence[Expr], at: Expr) -> list[Expr]:
    moved = list(idx)
    moved[dim] = at
    return moved


def _load_index(k: KernelWriter, index: Value, at: Sequence[Expr], mask: str | None, size: int | None,
                extent: int) -> Expr:
    from services.generator.lowering.ops_index import load_index

    return load_index(k, index, at, mask, size, extent)


def _dim(value: Any, rank: int) -> int:
    d = int(value)
    return d + max(1, rank) if d < 0 else d


# -- scatter, scatter_add, scatter_reduce ------------------------------------------------

def _scatter_values(src: Any, dtype: str) -> Callable[[KernelWriter, list[Expr], str], str]:
    work = compute_dtype(dtype)
    if isinstance(src, Value):
        return lambda k, idx, mask: k.cast(src.load(k, idx, mask), work)
    return lambda k, idx, mask: k.var(f"tl.full([1], {scalar_code(k, src, work)}, tl.{work})", work)


@lowers("aten.scatter.src", "aten.scatter.value")
def scatter(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out = self``, then ``out[i with dim -> index[i]] = src[i]`` for i over the index."""
    self_, index, src = args[0], args[2], args[3]
    dim = _dim(args[1], len(self_.shape))
    shape, dtype = out_meta(node)
    if index.numel == 0:
        return self_
    out = _copy(b, self_, dtype, "scatter")
    value = _scatter_values(src, dtype)

    def place(k: KernelWriter, idx: list[Expr], mask: str) -> list[Write]:
        at = _load_index(k, index, idx, mask, None, out.numel)
        return [Write(out, linear(_along(dim, idx, at), shape), value(k, idx, mask))]

    b.emit(scatter_kernel(b.kernel_name("scatter"), index.shape, place))
    return Stored(out)


REDUCE_IDENTITY = {"sum": "0", "mean": "0", "prod": "1"}


@lowers("aten.scatter_add.default", "aten.scatter_reduce.two", "aten.scatter.reduce", "aten.scatter.value_reduce")
def scatter_reduce(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    self_, index, src = args[0], args[2], args[3]
    dim = _dim(args[1], len(self_.shape))
    shape, dtype = out_meta(node)
    include_self = True
    if node.target == "aten.scatter_add.default":
        reduce = "sum"
    elif node.target == "aten.scatter_reduce.two":
        reduce = args[4] if len(args) > 4 else kwargs["reduce"]
        include_self = bool(args[5] if len(args) > 5 else kwargs.get("include_self", True))
    else:  # the older scatter(..., reduce="add" | "multiply")
        reduce = {"add": "sum", "multiply": "prod"}[args[4] if len(args) > 4 else kwargs["reduce"]]
    return reduce_into(b, self_, dim, index, src, reduce, include_self, shape, dtype)


def reduce_into(b: Builder, self_: Value, dim: int, index: Value, src: Any, reduce: str, include_self: bool,
                shape: tuple[int, ...], dtype: str) -> Value:
    """``self`` with each element ``src[i]`` combined into ``self[i with dim -> index[i]]``
    (i over the index's shape) by ``reduce``; with ``include_self=False`` the places written
    start from the written elements alone."""
    if index.numel == 0:
        return self_
    if reduce == "prod":
        return _scatter_prod(b, self_, dim, index, src, include_self, dtype)
    if reduce not in ("sum", "mean", "amax", "amin"):
        raise Unsupported(f"scatter_reduce with reduce={reduce!r}")
    acc = accumulator_dtype(dtype, f"scatter_reduce ({reduce})")
    out = _copy(b, self_, acc, "scatter_" + reduce, {"amax": "max", "amin": "min"}.get(reduce, ""))
    value = _scatter_values(src, acc)

    def target(k: KernelWriter, idx: list[Expr], mask: str) -> Expr:
        return linear(_along(dim, idx, _load_index(k, index, idx, mask, None, out.numel)), shape)

    if not include_self:
        ident = REDUCE_IDENTITY.get(reduce) or (lowest(acc) if reduce == "amax" else highest(acc))
        b.emit(scatter_kernel(b.kernel_name("scatter_reset"), index.shape, lambda k, idx, mask: [
            Write(out, target(k, idx, mask), k.var(f"tl.full([1], {ident}, tl.{acc})", acc))]))
    count = b.new_buffer(tuple(shape), "int32", "scatter_count") if reduce == "mean" else None
    if count is not None:
        b.fill(count, _constant(shape, "int32", 1 if include_self else 0))

    def place(k: KernelWriter, idx: list[Expr], mask: str) -> list[Write]:
        at = target(k, idx, mask)
        v = value(k, idx, mask)
        if reduce in ("sum", "mean"):
            writes = [Write(out, at, v, "add")]
            if count is not None:
                writes.append(Write(count, at, k.var("tl.full([1], 1, tl.int32)", "int32"), "add"))
            return writes
        return _extreme_writes(k, out, at, v, "max" if reduce == "amax" else "min")

    b.emit(scatter_kernel(b.kernel_name("scatter_" + reduce), index.shape, place))
    if count is not None:
        return _mean(out, count, dtype)
    return rounded(out, dtype)


def _extreme_writes(k: KernelWriter, out: Buffer, at: Expr, v: str, op: str) -> list[Write]:
    """Atomic max/min; a NaN goes in as the NaN the operation keeps (see _sticky_nan)."""
    if out.dtype in FLOATS:
        v = _sticky_nan(k, v, out.dtype, op)
    return [Write(out, at, v, op)]


def _constant(shape: Sequence[int], dtype: str, value: int | float) -> Value:
    from services.generator.lowering.ops_pointwise import constant

    return constant(shape, dtype, value)


def _mean(total: Buffer, count: Buffer, dtype: str) -> Value:
    """``total / count`` where anything was counted (floor division for integers, as
    PyTorch's scatter_reduce divides them), the total itself elsewhere."""
    work = compute_dtype(dtype)
    t, c = Stored(total), Stored(count)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        tv, cv = k.cast(t.load(k, idx, mask), work), c.load(k, idx, mask)
        n = k.var(f"tl.maximum({cv}, 1)", "int32")
        if work in FLOATS:
            q = k.var(f"({tv} / {n}.to(tl.{work}))", work)
        else:
            q = k.var(f"({tv} // {n})", work)
            q = k.var(f"tl.where((({tv} % {n}) != 0) & (({tv} < 0) != ({n} < 0)), {q} - 1, {q})", work)
        if dtype != work:
            q = k.cast(k.var(f"{q}.to(tl.{dtype})", dtype), work)
        return q

    return Lazy(total.shape, dtype, fn, 3)


def _scatter_prod(b: Builder, self_: Value, dim: int, index: Value, src: Any, include_self: bool,
                  dtype: str) -> Value:
    """Products gather instead: output element ``o`` walks the index along ``dim`` (at o's
    other coordinates) and multiplies the source elements whose index is ``o[dim]``, in
    order; without ``include_self`` an element nothing was scattered to keeps its value."""
    shape = list(self_.shape)
    m = index.shape[dim]
    acc = compute_dtype(dtype)
    k = KernelWriter(b.kernel_name("scatter_prod"))
    xn = numel(shape)
    block = k.constexpr("BLOCK")
    k.line("pid = tl.program_id(0)" + (".to(tl.int64)" if xn >= 2**31 else ""))
    k.line(f"xlin = pid * {block} + tl.arange(0, {block})")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, shape, "xlin", "x")
    k.aliases[sympy.expand(linear(xs, shape))] = "xlin"
    # Coordinates past the index's extent (it may be smaller than self) receive nothing.
    inside = [f"({k.index(x)} < {index.shape[d]})" for d, x in enumerate(xs) if d != dim and index.shape[d] < shape[d]]
    live = k.var(" & ".join(["xmask", *inside]), "bool") if inside else "xmask"
    k.line(f"product = tl.full([{block}], 1, tl.{acc})")
    k.line(f"hits = tl.zeros([{block}], tl.int32)")
    j = range_symbol(f"j_{k.name}", m)
    k.names[j] = "jj"
    with k.block(f"for j in range(0, {m}):"):
        # j spread over the block: an index read only at j (index_reduce's) stays a block load.
        k.line("jj = j + xlin * 0")
        at = _along(dim, xs, j)
        target = _load_index(k, index, at, live, None, self_.numel)
        hit = k.var(f"({live} & ({k.index(target)} == {k.index(xs[dim])}))", "bool")
        v = k.cast(src.load(k, at, hit), acc) if isinstance(src, Value) else literal(src, acc)
        k.line(f"product = tl.where({hit}, product * {v}, product)")
        k.line(f"hits += {hit}.to(tl.int32)")
    base = k.cast(self_.load(k, xs, "xmask"), acc)
    result = (k.var(f"({base} * product)", acc) if include_self
              else k.var(f"tl.where(hits > 0, product, {base})", acc))
    out = b.new_buffer(tuple(shape), dtype, "scatter_prod")
    k.store(out, linear(xs, shape), result, "xmask")
    gpu, cpu = min(1024, pow2(xn)), min(16384, pow2(xn))
    b.emit(Kernel(k, kernel_args(k), LaunchShape((math.ceil(xn / gpu),), {"BLOCK": gpu}, 4),
                  LaunchShape((math.ceil(xn / cpu),), {"BLOCK": cpu}, 1), [out]))
    return Stored(out)


# -- index_put, index_add ---------------------------------------------------------------

@lowers("aten.index_put.default", "aten._unsafe_index_put.default")
def index_put(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out = self; out[indices] = values`` (``+=`` with accumulate). A boolean mask with
    one value (``x[x < 0] = 0``) is a ``where``; with several values it would depend on the
    number of True elements and is refused."""
    from services.generator.lowering.ops_index import Advanced, broadcast_at

    self_, indices, values = args[0], list(args[1]), args[2]
    accumulate = bool(args[3] if len(args) > 3 else kwargs.get("accumulate", False))
    shape, dtype = out_meta(node)
    if any(isinstance(t, Value) and t.dtype in ("bool", "uint8") for t in indices):
        return _masked_put(self_, indices, values, accumulate, shape, dtype)
    adv = Advanced(self_.shape, indices, "index_put")
    domain = adv.shape
    if numel(domain) == 0:
        return self_
    work = compute_dtype(dtype)
    if accumulate:
        acc = accumulator_dtype(dtype, "index_put with accumulate=True")
        out = _copy(b, self_, acc, "index_put")
    else:
        out = _copy(b, self_, dtype, "index_put")

    def place(k: KernelWriter, idx: list[Expr], mask: str) -> list[Write]:
        at = linear(adv.source_index(k, idx, mask, out.numel), shape)
        v = k.cast(values.load(k, broadcast_at(values, idx), mask), work)
        return [Write(out, at, v, "add" if accumulate else "store")]

    b.emit(scatter_kernel(b.kernel_name("index_put"), domain, place))
    return rounded(out, dtype) if accumulate else Stored(out)


def _masked_put(self_: Value, indices: list[Any], values: Value, accumulate: bool, shape: tuple[int, ...],
                dtype: str) -> Value:
    entries = [(d, t) for d, t in enumerate(indices) if t is not None]
    if len(entries) != 1 or values.numel != 1:
        raise Unsupported("index_put with a boolean mask and more than one value (x[mask] = tensor) writes a "
                          "data-dependent number of values; only a single value (x[mask] = v) is supported")
    start, mask_value = entries[0]
    rank = len(mask_value.shape)
    work = compute_dtype(dtype)
    zeros = [sympy.Integer(0)] * len(values.shape)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        hit = k.cast(mask_value.load(k, list(idx[start:start + rank]), mask), "bool")
        base = k.cast(self_.load(k, idx, mask), work)
        v = k.cast(values.load(k, zeros, None), work)
        if accumulate:
            v = k.var(f"({base} + {v})", work)
        return k.var(f"tl.where({hit}, {v}, {base})", work)

    return Lazy(shape, dtype, fn, self_.cost + mask_value.cost + 2)


@lowers("aten.index_add.default")
def index_add(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out = self; out[..., index[i], ...] += alpha * source[..., i, ...]``."""
    self_, index, source = args[0], args[2], args[3]
    dim = _dim(args[1], len(self_.shape))
    alpha = args[4] if len(args) > 4 else kwargs.get("alpha", 1)
    shape, dtype = out_meta(node)
    if source.numel == 0:
        return self_
    acc = accumulator_dtype(dtype, "index_add")
    out = _copy(b, self_, acc, "index_add")
    work = compute_dtype(dtype)

    def place(k: KernelWriter, idx: list[Expr], mask: str) -> list[Write]:
        at = _load_index(k, index, [idx[dim]] if index.shape else [], mask, None, out.numel) \
            if source.shape else _load_index(k, index, [], mask, None, out.numel)
        target = linear(_along(dim, idx, at), shape) if source.shape else at
        v = k.cast(source.load(k, idx, mask), work)
        if alpha != 1:
            v = k.var(f"({v} * {scalar_code(k, alpha, work)})", work)
        return [Write(out, target, v, "add")]

    b.emit(scatter_kernel(b.kernel_name("index_add"), source.shape, place))
    return rounded(out, dtype)


@lowers("aten.index_reduce.default")
def index_reduce(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out[..., index[i], ...] = reduce(out[..., index[i], ...], source[..., i, ...])``: a
    scatter_reduce whose index is the 1-d index spread over the source's shape."""
    self_, index, source, reduce = args[0], args[2], args[3], args[4]
    dim = _dim(args[1], len(self_.shape))
    include_self = bool(args[5] if len(args) > 5 else kwargs.get("include_self", True))
    shape, dtype = out_meta(node)
    if not source.shape:
        raise Unsupported("index_reduce of a 0-d source")
    spread = Lazy(source.shape, index.dtype,
                  lambda k, idx, mask: index.load(k, [idx[dim]] if index.shape else [], mask), index.cost)
    return reduce_into(b, self_, dim, spread, source, reduce, include_self, shape, dtype)


@lowers("aten.masked_scatter.default")
def masked_scatter(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``self`` with its masked elements replaced, in order, by the source's first elements:
    element i takes ``source.flatten()[c_i - 1]``, c the running count of the (broadcast)
    mask in flat order - one scan kernel, then a lazy gather."""
    from services.generator.lowering.ops_index import broadcast_at
    from services.generator.lowering.ops_scan import KINDS, scan_kernel

    self_, mask, source = args[0], args[1], args[2]
    shape, dtype = out_meta(node)
    n = numel(shape)
    if n == 0:
        return self_
    width = "int64" if n >= 2**31 else "int32"

    def flat_mask(k: KernelWriter, idx: Sequence[Expr], m: str | None) -> str:
        at = broadcast_at(mask, delinearize(idx[0], shape))
        return k.cast(mask.load(k, at, m), width)

    counts = b.new_buffer((n,), width, "mask_count")
    b.emit(scan_kernel(b.kernel_name("mask_count"), Lazy((n,), width, flat_mask, mask.cost + 1), 0, KINDS["cumsum"],
                       width, [counts]))
    running = Stored(counts)
    work = compute_dtype(dtype)

    def fn(k: KernelWriter, idx: Sequence[Expr], m: str | None) -> str:
        hit = k.cast(mask.load(k, broadcast_at(mask, idx), m), "bool")
        c = running.load(k, [linear(idx, shape)], m)
        pos = k.var(f"tl.where({hit}, {c} - 1, 0)", width)
        v = k.cast(source.load(k, delinearize(k.opaque(pos), source.shape), and_masks(m, hit)), work)
        return k.var(f"tl.where({hit}, {v}, {k.cast(self_.load(k, idx, m), work)})", work)

    return Lazy(shape, dtype, fn, self_.cost + source.cost + 3)
