"""Views and data movement: a view only changes the index a value is read at.

Reshapes, transposes, broadcasts, slices and flips are index maps on their input; ``cat``
and padding choose between inputs (or a fill value) by index. Nothing here writes memory,
except ``as_strided``, which addresses its input's storage and therefore reads it from a
buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr, contiguous_strides, delinearize, fold, linear, range_symbol
from services.generator.lowering.ir import KernelWriter, Lazy, Stored, Unsupported, Value, and_masks, peel_views, view
from services.generator.lowering.ops_pointwise import constant, literal, out_meta
from services.generator.lowering.kernels import pointwise_kernel, tl_type
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node


def _norm(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


# Operators a broadcast value may inline into each reader before it is stored instead. A
# few operators per element cost nothing in a kernel bound by memory, while a kernel of its
# own costs a launch (host time and a GPU gap of microseconds): a batch norm's
# rsqrt(var + eps) per channel is recomputed by the kernel that applies it.
BROADCAST_RECOMPUTE = 8


@lowers("prims.broadcast_in_dim.default")
def broadcast_in_dim(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, shape, dims = args[0], [int(s) for s in args[1]], [int(d) for d in args[2]]
    if not isinstance(src, Value):
        return constant(shape, out_meta(node)[1], src)
    if src.cost > BROADCAST_RECOMPUTE and _numel(shape) >= 4 * src.numel:
        # A computed value read many times over: compute it once.
        src = b.realize(src, "bcast")
    in_shape = src.shape

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [sympy.Integer(0) if in_shape[i] == 1 and shape[d] != 1 else idx[d] for i, d in enumerate(dims)]

    return view(src, shape, remap)


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _reshape(src: Value, shape: Sequence[int]) -> Value:
    """Any reshape: through the flat position (simplified back to plain index moves)."""
    in_shape = src.shape
    if tuple(in_shape) == tuple(shape):
        return src

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return delinearize(linear(idx, shape), in_shape)

    return view(src, shape, remap)


@lowers("prims.collapse_view.default", "prims.collapse.default")
def collapse(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    return _reshape(args[0], out_meta(node)[0])


@lowers("prims.split_dim.default", "prims.reshape.default", "aten.view.default", "aten._unsafe_view.default",
        "aten.reshape.default", "aten.view_copy.default", "aten.squeeze.dims", "aten.squeeze.dim",
        "aten.squeeze.default", "aten.unsqueeze.default", "aten.flatten.using_ints")
def reshape(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    return _reshape(args[0], out_meta(node)[0])


@lowers("prims.squeeze.default")
def squeeze(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    dims = {_norm(int(d), len(src.shape)) for d in args[1]}
    shape = out_meta(node)[0]

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        it = iter(idx)
        return [sympy.Integer(0) if d in dims else next(it) for d in range(len(src.shape))]

    return view(src, shape, remap)


@lowers("prims.transpose.default", "aten.permute.default")
def transpose(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, perm = args[0], [_norm(int(p), len(args[0].shape)) for p in args[1]]
    shape = out_meta(node)[0]
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [idx[inverse[d]] for d in range(len(perm))]

    return view(src, shape, remap)


@lowers("aten.t.default", "aten.transpose.int")
def transpose_two(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    rank = len(src.shape)
    d0, d1 = (0, 1) if len(args) < 3 else (_norm(int(args[1]), rank), _norm(int(args[2]), rank))
    shape = out_meta(node)[0]

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        out = list(idx)
        out[d0], out[d1] = idx[d1], idx[d0]
        return out

    return view(src, shape, remap)


@lowers("aten.expand.default")
def expand(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    shape = out_meta(node)[0]
    lead = len(shape) - len(src.shape)

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [sympy.Integer(0) if src.shape[i] == 1 and shape[i + lead] != 1 else idx[i + lead]
                for i in range(len(src.shape))]

    return view(src, shape, remap)


@lowers("prims.view_of.default", "aten.alias.default", "prims.clone.default", "aten.clone.default",
        "aten.lift_fresh_copy.default", "aten.detach.default", "aten.contiguous.default", "aten._to_copy.default",
        "prims.view_element_type.default")
def identity(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    shape, dtype = out_meta(node)
    if dtype != src.dtype:
        from services.generator.lowering.ops_pointwise import convert

        return convert(b, node, [src, dtype], {})
    return src


@lowers("prims.rev.default", "aten.flip.default")
def rev(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    dims = {_norm(int(d), len(src.shape)) for d in args[1]}

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [(src.shape[d] - 1 - i) if d in dims else i for d, i in enumerate(idx)]

    return view(src, src.shape, remap)


@lowers("prims.slice.default")
def prims_slice(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, starts = args[0], [int(s) for s in args[1]]
    strides = [int(s) for s in args[3]] if len(args) > 3 and args[3] else [1] * len(starts)
    shape = out_meta(node)[0]

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [s + i * st for i, s, st in zip(idx, starts, strides, strict=True)]

    return view(src, shape, remap)


@lowers("prims.slice_in_dim.default", "aten.slice.Tensor")
def slice_in_dim(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src = args[0]
    shape = out_meta(node)[0]
    if node.target == "aten.slice.Tensor":
        dim = _norm(int(args[1]) if len(args) > 1 else 0, len(src.shape))
        start = args[2] if len(args) > 2 and args[2] is not None else 0
        step = int(args[4]) if len(args) > 4 else 1
    else:
        start, dim = args[1], _norm(int(args[4]) if len(args) > 4 else 0, len(src.shape))
        step = int(args[3]) if len(args) > 3 else 1
    size = src.shape[dim]
    start = max(0, min(size, int(start) + size if int(start) < 0 else int(start)))

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        out = list(idx)
        out[dim] = start + idx[dim] * step
        return out

    return view(src, shape, remap)


@lowers("aten.select.int")
def select(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, dim = args[0], _norm(int(args[1]), len(args[0].shape))
    index = int(args[2]) % src.shape[dim]
    shape = out_meta(node)[0]

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [*idx[:dim], sympy.Integer(index), *idx[dim:]]

    return view(src, shape, remap)


@lowers("prims.as_strided.default", "aten.as_strided.default")
def as_strided(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """Addresses the input's *storage*: element i of the view is storage[offset + sum i*stride].

    The storage is known when the input is itself such a view (its storage carries over:
    chained slices of an input), or when the input is laid out contiguously from offset 0
    (then its own values, stored, are the storage)."""
    src, size, stride = args[0], [int(s) for s in args[1]], [int(s) for s in args[2]]
    explicit = args[3] if len(args) > 3 else kwargs.get("storage_offset")
    storage = getattr(src, "storage", None)
    # Without an offset of its own, the view starts where its input does in the storage
    # (``ids[2]`` of a contiguous (4, 2, 2) tensor starts at element 8), as PyTorch's does.
    offset = int(explicit) if explicit is not None else getattr(src, "storage_offset", 0)
    if storage is None:
        meta = b.meta(node.args[0])
        if meta is None or len(meta.stride) != len(meta.shape):
            raise Unsupported("as_strided over a value whose layout the graph does not give")
        contiguous = meta.offset == 0 and all(
            st == want for st, want, n in zip(meta.stride, contiguous_strides(meta.shape), meta.shape, strict=True)
            if n > 1)
        if contiguous:
            storage = _stored_in_order(b, src) or b.realize(src, "strided")
        else:
            storage = _strided_storage(b, src, meta.stride, meta.offset)
        if explicit is None:
            offset = meta.offset

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        return k.load(storage.buffer, offset + sympy.Add(*[i * s for i, s in zip(idx, stride, strict=True)]), mask)

    out = Lazy(size, src.dtype, fn, 0, view_of=storage)
    out.storage = storage  # type: ignore[attr-defined]
    out.storage_offset = offset  # type: ignore[attr-defined]
    return out


def _stored_in_order(b: Builder, src: Value) -> Stored | None:
    """The value ``src`` reshapes without moving an element (the views between keep the
    linear order: ``split_dim`` of a product's output), stored as it is stored anyway (a
    buffer, a product its own kernel stores), as ``src``'s storage; None when ``src`` is
    computed or reorders. Three ``unbind`` views of one product then read its output in
    place, where each stored a copy of all of it."""
    syms = [range_symbol(f"v{i}", n) for i, n in enumerate(src.shape)]
    current, views = peel_views(src)
    index: Sequence[Expr] = syms
    for step in views:
        assert step.remap is not None
        index = step.remap(index)
    if isinstance(current, Lazy) or current.numel != src.numel:
        return None
    same = sympy.expand(fold(linear(list(index), current.shape)) - linear(syms, src.shape)) == 0
    return b.realize(current) if same else None


def _strided_storage(b: Builder, src: Value, strides: Sequence[int], offset: int) -> Stored:
    """A buffer laid out as ``src`` is in the program (a transposed or sliced view of some
    storage): element i at ``offset + sum i*stride``, so a view of that storage reads it."""
    if any(s < 0 for s in strides):
        raise Unsupported("as_strided over a view with negative strides")
    extent = offset + sum((n - 1) * s for n, s in zip(src.shape, strides, strict=True) if n > 0) + 1
    buf = b.new_buffer((extent,), src.dtype, "storage")
    b.emit(pointwise_kernel(b.kernel_name("storage"), src, buf, (list(strides), offset)))
    return Stored(buf)


@lowers("prims.cat.default", "aten.cat.default")
def cat(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    dim = _norm(int(args[1]) if len(args) > 1 else int(kwargs.get("dim", 0)), len(shape))
    return concat([p for p in args[0] if isinstance(p, Value)], dim, shape, dtype)


def concat(parts: Sequence[Value], dim: int, shape: Sequence[int], dtype: str) -> Value:
    """``parts`` joined along ``dim``: each element read from the part its position falls in."""
    parts = [p for p in parts if p.numel > 0]
    if len(parts) == 1:
        return parts[0]
    offsets, acc = [], 0
    for p in parts:
        offsets.append(acc)
        acc += p.shape[dim]
    cost = 1 + sum(p.cost for p in parts)
    work = _work(dtype)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        if getattr(idx[dim], "is_Integer", False):
            # A fixed position along the joined dimension: one part, chosen here.
            at = int(idx[dim])
            for p, off in zip(parts, offsets, strict=True):
                if off <= at < off + p.shape[dim]:
                    moved = list(idx)
                    moved[dim] = sympy.Integer(at - off)
                    return k.cast(p.load(k, moved, mask), work)
        pos = k.var(k.index(idx[dim]), "int32")
        out = None
        for p, off in reversed(list(zip(parts, offsets, strict=True))):
            inside = k.var(f"({pos} >= {off}) & ({pos} < {off + p.shape[dim]})", "bool")
            moved = list(idx)
            moved[dim] = idx[dim] - off
            v = k.cast(p.load(k, moved, and_masks(mask, inside)), work)
            out = v if out is None else k.var(f"tl.where({inside}, {v}, {out})", work)
        assert out is not None
        return out

    return Lazy(shape, dtype, fn, cost)


def _work(dtype: str) -> str:
    from services.generator.lowering.ir import compute_dtype

    return compute_dtype(dtype)


@lowers("aten.constant_pad_nd.default")
def constant_pad(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, pad = args[0], [int(p) for p in args[1]]
    fill = args[2] if len(args) > 2 else kwargs.get("value", 0)
    shape, dtype = out_meta(node)
    rank = len(shape)
    # pad lists (before, after) pairs from the last dimension backwards; negative pads crop
    befores = [0] * rank
    for i in range(len(pad) // 2):
        befores[rank - 1 - i] = pad[2 * i]
    work = _work(dtype)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        conds = []
        moved = []
        for d, (i, before) in enumerate(zip(idx, befores, strict=True)):
            src_i = i - before
            moved.append(src_i)
            if getattr(src_i, "is_Integer", False):
                if not 0 <= int(src_i) < src.shape[d]:
                    return k.var(f"tl.full([1], {literal(fill, work)}, {tl_type(work)})", work)
                continue
            if before > 0 or shape[d] - before > src.shape[d]:
                pos = k.var(k.index(src_i), "int32")
                conds.append(f"({pos} >= 0) & ({pos} < {src.shape[d]})")
        if not conds:
            return k.cast(src.load(k, moved, mask), work)
        inside = k.var(" & ".join(conds), "bool")
        v = k.cast(src.load(k, moved, and_masks(mask, inside)), work)
        return k.var(f"tl.where({inside}, {v}, {literal(fill, work)})", work)

    return Lazy(shape, dtype, fn, src.cost + 1)


@lowers("getitem")
def getitem(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    values, i = args[0], int(args[1])
    if not isinstance(values, (list, tuple)):
        raise Unsupported(f"getitem of a single value in {node.name}")
    return values[i]


def stored(value: Value) -> Stored | None:
    return value if isinstance(value, Stored) else None


__all__ = ["stored", "tl_type"]


@lowers("aten.copy.default", "prims.copy_to.default")
def copy(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """A functional copy: the source, broadcast to the destination's shape and dtype."""
    shape, dtype = out_meta(node)
    src = args[1]
    if not isinstance(src, Value):
        return constant(shape, dtype, src)
    lead = len(shape) - len(src.shape)

    def remap(idx: Sequence[Expr]) -> list[Expr]:
        return [sympy.Integer(0) if size == 1 and shape[i + lead] != 1 else idx[i + lead]
                for i, size in enumerate(src.shape)]

    moved = view(src, shape, remap)
    if src.dtype == dtype:
        return moved
    from services.generator.lowering.ops_pointwise import convert

    return convert(b, node, [moved, dtype], {})
