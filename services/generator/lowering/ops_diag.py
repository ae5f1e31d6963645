"""Diagonal matrices: ``torch.diag`` and ``torch.diag_embed`` kept whole, so that a matrix
product with a diagonal matrix is what it computes, a scaling of rows or columns.

Decomposed, a diagonal matrix is ``where(i == j, v, 0)``: stored (its n x n elements) and
multiplied in a full product, n times the work of scaling the other operand by ``v``. Kept
whole, the matrix is a lazy value that remembers the vector on its diagonal (``Diagonal``);
``ops_heavy.mm`` reads that and returns the scaling. For finite values the two agree exactly:
each output is one product plus zeros. Read any other way, the matrix is computed where it is
read, as the decomposition would compute it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.generator.lowering.indexing import Expr
from services.generator.lowering.ir import KernelWriter, Lazy, Unsupported, Value, and_masks, compute_dtype, view
from services.generator.lowering.ops_pointwise import literal, out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node


class Diagonal(Lazy):
    """A matrix (batch) holding ``vector`` on the diagonal ``offset`` of its dims ``dim1`` and
    ``dim2`` (the vector's last dim runs along it, its other dims are the batch), 0 elsewhere."""

    def __init__(self, vector: Value, shape: Sequence[int], dtype: str, offset: int, dim1: int, dim2: int) -> None:
        self.vector, self.offset, self.dim1, self.dim2 = vector, offset, dim1, dim2
        super().__init__(shape, dtype, self._element, vector.cost + 1)

    def _element(self, k: KernelWriter, idx: Sequence[Expr], mask: str | None) -> str:
        row, col = idx[self.dim1], idx[self.dim2]
        on = k.var(f"({k.index(col - row)} == {self.offset})", "bool")
        batch = [e for d, e in enumerate(idx) if d not in (self.dim1, self.dim2)]
        along = row if self.offset >= 0 else col
        value = k.cast(self.vector.load(k, [*batch, along], and_masks(mask, on)), compute_dtype(self.dtype))
        return k.var(f"tl.where({on}, {value}, {literal(0, self.dtype)})", compute_dtype(self.dtype))


@lowers("aten.diag_embed.default")
def diag_embed(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x = args[0]
    shape, dtype = out_meta(node)
    offset = int(args[1] if len(args) > 1 else kwargs.get("offset", 0))
    rank = len(shape)
    dim1 = int(args[2] if len(args) > 2 else kwargs.get("dim1", -2)) % rank
    dim2 = int(args[3] if len(args) > 3 else kwargs.get("dim2", -1)) % rank
    if dim1 == dim2:
        raise Unsupported("diag_embed with dim1 == dim2")
    if dim1 > dim2:  # the same matrix, transposed: the offset counts the other way
        dim1, dim2, offset = dim2, dim1, -offset
    return Diagonal(x, shape, dtype, offset, dim1, dim2)


@lowers("aten.diag.default")
def diag(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """``torch.diag``: a vector's diagonal matrix, or a matrix's diagonal (a view)."""
    x = args[0]
    shape, dtype = out_meta(node)
    offset = int(args[1] if len(args) > 1 else kwargs.get("diagonal", 0))
    if len(x.shape) == 1:
        return Diagonal(x, shape, dtype, offset, 0, 1)
    if len(x.shape) != 2:
        raise Unsupported(f"torch.diag of a {len(x.shape)}-d tensor")
    rows, cols = max(0, -offset), max(0, offset)
    return view(x, shape, lambda idx: [idx[0] + rows, idx[0] + cols])
