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
from dataclasses import dataclass
from typing import Any

from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import Buffer, KernelWriter, Lazy, Stored, Unsupported, Value, compute_dtype
from services.generator.lowering.kernels import Kernel, LaunchShape, batched_form_ok, kernel_args, pow2
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

    name = b.kernel_name("embedding_bag")
    parts = BagParts(weight, indices_buf, offsets_buf, weights_buf, out, size_buf, max_buf, mode, padding,
                     include_last, bags, dim, n_index, n_offsets, compute_dtype(out_dtype))
    k = _bag_writer(name, parts, batched=False)
    batched = _bag_writer(name + "_i", parts, batched=True)
    args = kernel_args(k)
    own = ("tl.max(end - start)", "tl.arange(0, BLOCK_B)[:, None]", "tl.arange(0, BLOCK_D)[None, :]")
    interpreter = batched if batched_form_ok(batched, args, own) else None
    gpu = min(256, pow2(dim))
    cpu = min(4096, pow2(dim))
    cpu_meta = {"BLOCK_D": cpu}
    cpu_grid = (bags, math.ceil(dim / cpu))
    if interpreter is not None:
        cpu_meta["BLOCK_B"] = max(1, min(pow2(bags), INTERPRETER_TILE // cpu))
        cpu_grid = (math.ceil(bags / cpu_meta["BLOCK_B"]), math.ceil(dim / cpu))
    outputs = [buf for buf in (out, size_buf, max_buf) if buf is not None]
    b.emit(Kernel(k, args, LaunchShape((bags, math.ceil(dim / gpu)), {"BLOCK_D": gpu}, 4 if gpu >= 128 else 2),
                  LaunchShape(cpu_grid, cpu_meta, 1), outputs, interpreter=interpreter))

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



# Elements of one tile of the interpreter's form: several bags per program (each interpreted
# program costs a fixed overhead per operation; a batch of 1024 bags was 1024 programs).
INTERPRETER_TILE = 1 << 14


@dataclass(frozen=True)
class BagParts:
    weight: Value
    indices: Buffer
    offsets: Buffer
    weights: Buffer | None
    out: Buffer
    size: Buffer | None
    max_at: Buffer | None
    mode: str
    padding: int
    include_last: bool
    bags: int
    dim: int
    n_index: int
    n_offsets: int
    acc: str


def _bag_writer(name: str, p: BagParts, batched: bool) -> KernelWriter:
    """The bag kernel's source: one bag per program (a block of its columns), or (``batched``)
    ``BLOCK_B`` bags per program, each lane of a [bags, columns] tile walking its own bag."""
    k = KernelWriter(name)
    block = k.constexpr("BLOCK_D")
    offsets = k.pointer(p.offsets)
    if batched:
        bb = k.constexpr("BLOCK_B")
        k.line(f"bag = tl.program_id(0) * {bb} + tl.arange(0, {bb})[:, None]")
        k.line(f"cols = tl.program_id(1) * {block} + tl.arange(0, {block})[None, :]")
        k.line(f"bmask = bag < {p.bags}")
        lanes, first = f"[{bb}, {block}]", "bmask"
    else:
        k.line("bag = tl.program_id(0)")
        k.line(f"cols = tl.program_id(1) * {block} + tl.arange(0, {block})")
        lanes, first = f"[{block}]", None
    k.line(f"cmask = cols < {p.dim}")
    col = range_symbol(f"d_{k.name}", p.dim)
    k.names[col] = "cols"
    bag_mask = f", mask=bmask, other=0" if batched else ""
    k.line(f"start = tl.load({offsets} + bag{bag_mask}).to(tl.int32)")
    if p.include_last:
        k.line(f"end = tl.load({offsets} + bag + 1{bag_mask}).to(tl.int32)")
    else:  # the last bag runs to the end of the indices
        k.line(f"end = tl.load({offsets} + tl.minimum(bag + 1, {p.n_offsets - 1}){bag_mask}).to(tl.int32)")
        k.line(f"end = tl.where(bag + 1 < {p.n_offsets}, end, {p.n_index})")
    k.line(f"acc = tl.zeros({lanes}, tl.{p.acc})")
    k.line(f"count = tl.zeros({lanes}, tl.int32)")
    if p.mode == "max":
        k.line(f"best_at = tl.zeros({lanes}, tl.int64)")
    if batched:
        # Lanes past the last bag walk nothing; the loop runs to the longest bag's end.
        k.line("end = tl.where(bmask, end, start)")
        loop, position = "for j in range(0, tl.max(end - start)):", "start + j"
    else:
        loop, position = "for j in range(start, end):", "j"
    with k.block(loop):
        if batched:
            k.line(f"pos = {position}")
            k.line("live = pos < end")
            k.line(f"row = tl.load({k.pointer(p.indices)} + pos, mask=live, other=0)")
            k.line(f"keep = live & (row != {p.padding})")
        else:
            # Read by every lane (one cached address): masks stay blocks, which the
            # interpreter needs (a scalar mask combined with a block one is refused there).
            k.line(f"row = tl.load({k.pointer(p.indices)} + j + cols * 0)")
            k.line(f"keep = row != {p.padding}")
        k.dtypes["row"] = p.indices.dtype
        at = k.opaque("row")
        v = k.cast(p.weight.load(k, [at, col], "(cmask & keep)"), p.acc)
        if p.mode == "max":
            # The first row of a bag is taken whatever it holds (NaN too), later ones when greater.
            k.line(f"take = keep & ((count == 0) | ({v} > acc))")
            k.line(f"acc = tl.where(take, {v}, acc)")
            k.line("best_at = tl.where(take, row.to(tl.int64), best_at)")
        elif p.weights is not None:
            where = "pos, mask=live, other=0" if batched else "j + cols * 0"
            k.line(f"acc += tl.where(keep, {v} * tl.load({k.pointer(p.weights)} + {where}).to(tl.{p.acc}), 0)")
        else:
            k.line(f"acc += tl.where(keep, {v}, 0)")
        k.line("count += keep.to(tl.int32)")
    result = "tl.where(count > 0, acc / count.to(tl.%s), 0)" % p.acc if p.mode == "mean" else "acc"
    store_mask = f"{first} & cmask" if first else "cmask"
    k.line(f"tl.store({k.pointer(p.out)} + bag * {p.dim} + cols, {k.cast(k.var(result, p.acc), p.out.dtype)}, "
           f"mask={store_mask})")
    if p.size is not None:
        size_mask = f"{first} & (cols == 0)" if first else "cols == 0"
        k.line(f"tl.store({k.pointer(p.size)} + bag + cols * 0, count.to(tl.int64), mask={size_mask})")
    if p.max_at is not None:
        k.line(f"tl.store({k.pointer(p.max_at)} + bag * {p.dim} + cols, best_at, mask={store_mask})")
    return k
