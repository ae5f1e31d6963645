"""Reading by index: gather, index_select, embedding, advanced indexing, searchsorted.

Each is a lazy value with an indirect load: the index is loaded where the value is read,
becomes an opaque symbol of the index expression (``KernelWriter.opaque``), and the source
is read at the index it names; so a gather inside a loss, or an embedding before a
reduction, costs no buffer. Indices wrap from the end where PyTorch accepts negative ones
(advanced indexing); elsewhere PyTorch refuses them and they are read as given.

Operators whose output size depends on the data (``nonzero``, ``masked_select``, ``unique``,
``bincount``, boolean-mask indexing) cannot be lowered to a static kernel program and are
refused by name. Writing by index (the scatter family) lives in :mod:`ops_scatter`, bags of
embeddings in :mod:`ops_bag`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr
from services.generator.lowering.ir import KernelWriter, Lazy, Unsupported, Value
from services.generator.lowering.ops_pointwise import literal, out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node


def _dim(value: Any, rank: int) -> int:
    d = int(value)
    return d + max(1, rank) if d < 0 else d


def load_index(k: KernelWriter, index: Value, at: Sequence[Expr], mask: str | None, size: int | None,
               extent: int) -> Expr:
    """The index stored in ``index`` at ``at``, as a symbol for index expressions; wrapped
    from the end (``i + size``) when ``size`` is given. ``extent`` is the element count of
    the tensor it indexes: offsets stay 32-bit below 2**31 elements."""
    raw = index.load(k, at, mask)
    width = "int64" if extent >= 2**31 or k.wide_index else "int32"
    var = k.cast(raw, width)
    if size is not None:
        var = k.var(f"tl.where({var} < 0, {var} + {size}, {var})", width)
    return k.opaque(var)


def _check_index(index: Value, op: str) -> None:
    if index.dtype in ("bool", "uint8"):
        raise Unsupported(f"{op} with a boolean mask as index selects a data-dependent number of elements, "
                          "which a kernel program with static shapes cannot produce")
    if index.dtype not in ("int64", "int32", "int16", "int8"):
        raise Unsupported(f"{op} with an index tensor of dtype {index.dtype}")


@lowers("aten.gather.default")
def gather(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out[i] = src[i with i[dim] replaced by index[i]]``; the output has the index's shape."""
    src, index = args[0], args[2]
    dim = _dim(args[1], len(src.shape))
    shape, dtype = out_meta(node)
    _check_index(index, "gather")
    if not src.shape:
        return src

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        at = load_index(k, index, idx, mask, None, src.numel)
        moved = list(idx)
        moved[dim] = at
        return src.load(k, moved, mask)

    return Lazy(shape, dtype, fn, src.cost + index.cost + 1)


@lowers("aten.index_select.default")
def index_select(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``out[..., i, ...] = src[..., index[i], ...]`` along ``dim``."""
    src, index = args[0], args[2]
    dim = _dim(args[1], len(src.shape))
    shape, dtype = out_meta(node)
    _check_index(index, "index_select")
    if not src.shape:
        return src

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        at = load_index(k, index, [idx[dim]] if index.shape else [], mask, None, src.numel)
        moved = list(idx)
        moved[dim] = at
        return src.load(k, moved, mask)

    return Lazy(shape, dtype, fn, src.cost + index.cost + 1)


@lowers("aten.embedding.default")
def embedding(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """Rows of the weight: ``out[..., e] = weight[indices[...], e]`` (padding_idx only
    matters to gradients)."""
    weight, indices = args[0], args[1]
    shape, dtype = out_meta(node)
    _check_index(indices, "embedding")
    rank = len(indices.shape)

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        row = load_index(k, indices, list(idx[:rank]), mask, None, weight.numel)
        return weight.load(k, [row, *idx[rank:]], mask)

    return Lazy(shape, dtype, fn, weight.cost + indices.cost + 1)


def broadcast_shape(shapes: Sequence[Sequence[int]]) -> list[int]:
    """NumPy's broadcast of ``shapes`` (right-aligned, size 1 stretches)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, size in enumerate(s):
            d = rank - len(s) + i
            if size != 1:
                if out[d] not in (1, size):
                    raise Unsupported(f"index tensors of shapes {[list(x) for x in shapes]} do not broadcast")
                out[d] = size
    return out


def broadcast_at(value: Value, idx: Sequence[Expr]) -> list[Expr]:
    """The index of ``value`` at ``idx`` of a shape it broadcasts to (right-aligned)."""
    rank = len(value.shape)
    tail = list(idx[len(idx) - rank:]) if rank else []
    return [sympy.Integer(0) if size == 1 else i for size, i in zip(value.shape, tail, strict=True)]


class Advanced:
    """Where ``src[indices]`` (advanced indexing, ``None`` for a whole dimension) puts each
    dimension: the index tensors broadcast together to ``bshape``; when they sit next to
    each other the broadcast dimensions replace them in place, otherwise they come first,
    as in NumPy."""

    def __init__(self, src_shape: Sequence[int], indices: Sequence[Value | None], op: str) -> None:
        self.src_shape = list(src_shape)
        rank = len(src_shape)
        entries = list(indices) + [None] * (rank - len(indices))
        if len(entries) > rank:
            raise Unsupported(f"{op} with more indices ({len(indices)}) than dimensions ({rank})")
        self.tensors = {d: t for d, t in enumerate(entries) if t is not None}
        if not self.tensors:
            raise Unsupported(f"{op} without an index tensor")
        for t in self.tensors.values():
            _check_index(t, op)
        self.bshape = broadcast_shape([t.shape for t in self.tensors.values()])
        dims = sorted(self.tensors)
        self.adjacent = dims == list(range(dims[0], dims[-1] + 1))
        self.first = dims[0] if self.adjacent else 0
        self.rest = [d for d in range(rank) if d not in self.tensors]

    @property
    def shape(self) -> list[int]:
        plain = [self.src_shape[d] for d in self.rest]
        return plain[:self.first] + self.bshape + plain[self.first:]

    def source_index(self, k: KernelWriter, idx: Sequence[Expr], mask: str | None, extent: int) -> list[Expr]:
        """The source element that result element ``idx`` reads (negative indices wrap)."""
        nb = len(self.bshape)
        bidx = list(idx[self.first:self.first + nb])
        plain = list(idx[:self.first]) + list(idx[self.first + nb:])
        out: list[Expr] = []
        rest = iter(plain)
        for d, size in enumerate(self.src_shape):
            t = self.tensors.get(d)
            if t is None:
                out.append(next(rest))
            else:
                out.append(load_index(k, t, broadcast_at(t, bidx), mask, size, extent))
        return out


@lowers("aten.index.Tensor", "aten._unsafe_index.Tensor")
def index(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    src, indices = args[0], list(args[1])
    shape, dtype = out_meta(node)
    adv = Advanced(src.shape, indices, "indexing (aten.index.Tensor)")
    if tuple(adv.shape) != tuple(shape):
        raise Unsupported(f"advanced indexing of {list(src.shape)} gave {adv.shape}, the graph says {list(shape)}")
    cost = src.cost + sum(t.cost for t in adv.tensors.values()) + 1

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        return src.load(k, adv.source_index(k, idx, mask, src.numel), mask)

    return Lazy(shape, dtype, fn, cost)


def binary_search(k: KernelWriter, probe: str, length: int, read: Any, right: bool) -> str:
    """The insertion point of ``probe`` in a sorted sequence of ``length`` elements that
    ``read(k, position)`` loads, with the midpoints and comparisons of PyTorch's own search
    (left: first position whose element is not below the probe; right: not at or below
    it), so that even unsorted sequences and NaN give what PyTorch gives."""
    width = "int32"
    lo = k.var(f"tl.zeros_like({probe}).to(tl.{width})", width)
    hi = k.var(f"{lo} + {length}", width)
    for _ in range(max(1, int(length).bit_length())):
        active = k.var(f"({lo} < {hi})", "bool")
        mid = k.var(f"tl.where({active}, {lo} + (({hi} - {lo}) >> 1), 0)", width)
        at = read(k, mid)
        cmp = ">" if right else ">="
        go = k.var(f"({active} & ~({at} {cmp} {probe}))", "bool")
        lo, hi = (k.var(f"tl.where({go}, {mid} + 1, {lo})", width),
                  k.var(f"tl.where({active} & ~{go}, {mid}, {hi})", width))
    return lo


@lowers("aten.searchsorted.Tensor", "aten.searchsorted.Scalar")
def searchsorted(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    seq, values = args[0], args[1]
    shape, dtype = out_meta(node)
    right = bool(kwargs.get("right", False))
    if kwargs.get("side") is not None:
        right = kwargs["side"] == "right"
    return _search(seq, values, right, kwargs.get("sorter"), shape, dtype)


@lowers("aten.bucketize.Tensor", "aten.bucketize.Scalar")
def bucketize(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``bucketize(v, boundaries, right)`` is ``searchsorted(boundaries, v, right)``."""
    shape, dtype = out_meta(node)
    return _search(args[1], args[0], bool(kwargs.get("right", False)), None, shape, dtype)


def _search(seq: Value, values: Any, right: bool, sorter: Any, shape: tuple[int, ...], dtype: str) -> Value:
    """A binary search per value, unrolled (log2 of the sequence length steps); the
    sequence is one row for all values, or one row per leading index of the values."""
    length = seq.shape[-1] if seq.shape else 1
    lead = len(seq.shape) - 1
    work = "float32" if seq.dtype in ("float16", "bfloat16") else seq.dtype
    steps = max(1, int(length).bit_length())

    def fn(k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        if isinstance(values, Value):
            probe = k.cast(values.load(k, idx, mask), work)
        else:
            probe = k.var(f"tl.full([1], {literal(values, work)}, tl.{work})", work)
        row = list(idx[:lead])

        def read(k: KernelWriter, pos: str) -> str:
            at: Expr = k.opaque(pos)
            if isinstance(sorter, Value):
                at = load_index(k, sorter, [*row, at], mask, None, seq.numel)
            return k.cast(seq.load(k, [*row, at], mask), work)

        found = binary_search(k, probe, length, read, right)
        return k.cast(found, dtype)

    cost = 2 * steps + seq.cost + (values.cost if isinstance(values, Value) else 0)
    return Lazy(shape, dtype, fn, cost)


@lowers("aten._assert_async.msg", "aten._assert_async.default")
def assert_async(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Range checks the graph makes about its data (one_hot's class bounds): no kernel."""
    return None


DATA_DEPENDENT = {
    "aten.nonzero.default": "nonzero",
    "aten.masked_select.default": "masked_select",
    "aten._unique2.default": "unique",
    "aten.unique_dim.default": "unique",
    "aten.unique_consecutive.default": "unique_consecutive",
    "aten.bincount.default": "bincount",
    "aten.repeat_interleave.Tensor": "repeat_interleave with tensor repeats",
}


@lowers(*DATA_DEPENDENT)
def data_dependent(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> None:
    raise Unsupported(f"{DATA_DEPENDENT[node.target]} ({node.target}) has an output whose size depends on the "
                      "input's values; a kernel program needs every size before it runs")


# Registered with this module (they use its index helpers).
from services.generator.lowering import ops_bag, ops_scatter  # noqa: E402,F401
