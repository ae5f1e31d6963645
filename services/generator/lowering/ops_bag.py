"""``embedding_bag``: sums, means or maxima of bags of embedding rows.

One program per (bag, block of embedding columns) walks its bag's indices in a loop whose
bounds it loads from the offsets (bags have data-dependent lengths; the loop does not), in
the bag's order, as PyTorch does on the CPU: the result is deterministic and a maximum keeps
the first of equal values. Indices equal to ``padding_idx`` are skipped and not counted.

PyTorch returns three auxiliary tensors besides the result; they are produced as PyTorch
produces them, since a forward graph may read them: ``offset2bag`` (the bag of each index,
a binary search over the offsets), ``bag_size`` (indices counted per bag; zeros for sums)
and ``max_indices`` (the row each maximum came from; for sums zeros, for means the bag
sizes, as PyTorch's CPU kernel returns).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import KernelWriter, Lazy, Stored, Unsupported, Value, compute_dtype
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, pow2
from services.generator.lowering.ops_index import binary_search
from services.generator.lowering.ops_pointwise import constant
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

MODES = {0: "sum", 1: "mean", 2: "max"}


def _arg(args: list[Any], kwargs: dict[str, Any], i: int, name: str, default: Any) -> Any:
    return args[i] if len(args) > i else kwargs.get(name, default)


@lowers("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def embedding_bag(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    weight, indices, offsets = args[0], args[1], args[2]
    mode = MODES.get(int(_arg(args, kwargs, 4, "mode", 0)))
    weights = _arg(args, kwargs, 6, "per_sample_weights", None)
    include_last = bool(_arg(args, kwargs, 7, "include_last_offset", False))
    padding = int(_arg(args, kwargs, 8, "padding_idx", -1))
    if mode is None:
        raise Unsupported(f"embedding_bag with mode {args[4]!r}")
    if len(weight.shape) != 2 or len(indices.shape) != 1 or len(offsets.shape) != 1:
        raise Unsupported("embedding_bag with a weight that is not 2-d or indices/offsets that are not 1-d")
    metas = node.outputs
    if any(m is None for m in metas[:4]):
        raise Unsupported("embedding_bag without the metadata of its outputs")
    out_shape, out_dtype = tuple(metas[0].shape), metas[0].dtype  # type: ignore[union-attr]
    bags, dim = out_shape
    n_index, n_offsets = indices.numel, offsets.numel
    # Plain buffers: the kernel loads single indices and offsets by scalar position.
    indices_buf = b.realize(indices, "bag_indices").buffer
    offsets_buf = b.realize(offsets, "bag_offsets").buffer
    weights_buf = b.realize(weights, "bag_weights").buffer if isinstance(weights, Value) else None
    out = b.new_buffer(out_shape, out_dtype, "bag")
    size_buf = b.new_buffer(tuple(metas[2].shape), metas[2].dtype, "bag_size") if mode != "sum" else None  # type: ignore[union-attr]
    max_buf = b.new_buffer(tuple(metas[3].shape), metas[3].dtype, "bag_max_at") if mode == "max" else None  # type: ignore[union-attr]

    k = KernelWriter(b.kernel_name("embedding_bag"))
    block = k.constexpr("BLOCK_D")
    k.line("bag = tl.program_id(0)")
    k.line(f"cols = tl.program_id(1) * {block} + tl.arange(0, {block})")
    k.line(f"cmask = cols < {dim}")
    col = range_symbol(f"d_{k.name}", dim)
    k.names[col] = "cols"
    k.line(f"start = tl.load({k.pointer(offsets_buf)} + bag).to(tl.int32)")
    if include_last:
        k.line(f"end = tl.load({k.pointer(offsets_buf)} + bag + 1).to(tl.int32)")
    else:  # the last bag runs to the end of the indices
        k.line(f"end = tl.load({k.pointer(offsets_buf)} + tl.minimum(bag + 1, {n_offsets - 1}))"
               f".to(tl.int32)")
        k.line(f"end = tl.where(bag + 1 < {n_offsets}, end, {n_index})")
    acc = compute_dtype(out_dtype)
    k.line(f"acc = tl.zeros([{block}], tl.{acc})")
    k.line(f"count = tl.zeros([{block}], tl.int32)")
    if mode == "max":
        k.line(f"best_at = tl.zeros([{block}], tl.int64)")
    with k.block("for j in range(start, end):"):
        # Read by every lane (one cached address): masks stay blocks, which the
        # interpreter needs (a scalar mask combined with a block one is refused there).
        k.line(f"row = tl.load({k.pointer(indices_buf)} + j + cols * 0)")
        k.line(f"keep = row != {padding}")
        k.dtypes["row"] = indices_buf.dtype
        at = k.opaque("row")
        v = k.cast(weight.load(k, [at, col], "(cmask & keep)"), acc)
        if mode == "max":
            # The first row of a bag is taken whatever it holds (NaN too), later ones when greater.
            k.line(f"take = keep & ((count == 0) | ({v} > acc))")
            k.line(f"acc = tl.where(take, {v}, acc)")
            k.line("best_at = tl.where(take, row.to(tl.int64), best_at)")
        elif weights_buf is not None:
            k.line(f"acc += tl.where(keep, {v} * tl.load({k.pointer(weights_buf)} + j + cols * 0).to(tl.{acc}), 0)")
        else:
            k.line(f"acc += tl.where(keep, {v}, 0)")
        k.line("count += keep.to(tl.int32)")
    result = "tl.where(count > 0, acc / count.to(tl.%s), 0)" % acc if mode == "mean" else "acc"
    k.line(f"tl.store({k.pointer(out)} + bag * {dim} + cols, {k.cast(k.var(result, acc), out_dtype)}, mask=cmask)")
    if size_buf is not None:
        k.line(f"tl.store({k.pointer(size_buf)} + bag + cols * 0, count.to(tl.int64), mask=cols == 0)")
    if max_buf is not None:
        k.line(f"tl.store({k.pointer(max_buf)} + bag * {dim} + cols, best_at, mask=cmask)")
    gpu = min(256, pow2(dim))
    cpu = min(4096, pow2(dim))
    outputs = [buf for buf in (out, size_buf, max_buf) if buf is not None]
    b.emit(Kernel(k, kernel_args(k), LaunchShape((bags, math.ceil(dim / gpu)), {"BLOCK_D": gpu}, 4 if gpu >= 128 else 2),
                  LaunchShape((bags, math.ceil(dim / cpu)), {"BLOCK_D": cpu}, 1), outputs))

    offset2bag = _offset2bag(Stored(offsets_buf), n_index, bags, tuple(metas[1].shape), metas[1].dtype)  # type: ignore[union-attr]
    zeros_size = constant(tuple(metas[2].shape), metas[2].dtype, 0)  # type: ignore[union-attr]
    bag_size: Value = Stored(size_buf) if size_buf is not None else zeros_size
    if mode == "max":
        max_indices: Value = Stored(max_buf)  # type: ignore[arg-type]
    elif mode == "mean":
        max_indices = bag_size
    else:
        max_indices = constant(tuple(metas[3].shape), metas[3].dtype, 0)  # type: ignore[union-attr]
    return [Stored(out), offset2bag, bag_size, max_indices]


def _offset2bag(offsets: Stored, n_index: int, bags: int, shape: tuple[int, ...], dtype: str) -> Value:
    """The bag of each index: the last bag whose offset is at or below its position."""
    if not shape or shape[0] != n_index:
        # PyTorch's own shape for this output (it may be empty): zeros, never read by a forward.
        return constant(shape, dtype, 0)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        pos = k.var(f"({k.index(idx[0])} + tl.zeros([1], tl.int32))", "int32")

        def read(k: KernelWriter, at: str) -> str:
            return k.cast(offsets.load(k, [k.opaque(at)], mask), "int32")

        found = binary_search(k, pos, bags, read, right=True)
        return k.cast(k.var(f"({found} - 1)", "int32"), compute_dtype(dtype))

    return Lazy(shape, dtype, fn, 2 * max(1, bags.bit_length()))

