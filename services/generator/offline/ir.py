"""The IR the lowering builds and the templates render: operands, SSA values over one 2-D
tile view (rows x last dim), the one matmul-like op of a graph and the whole program.

Its own module so that the decompositions (decompose.py, a mixin of the Lowerer) can build
values without importing the Lowerer that inherits from them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Heavy", "Operand", "Program", "Value"]


@dataclass
class Operand:
    expr: str          # how ModelNew.forward reaches the tensor: "x", "self.weight", "self.ln.bias"
    shape: list[int]   # at trace (cpu) sizes
    dtype: str
    role: str = ""     # full | rowvec | colvec | scalar (set once the tile shape is known)


@dataclass
class Value:
    op: str                    # load | const | unary | binary | where | reduce | acc
    fn: str = ""
    args: list[int] = field(default_factory=list)
    operand: int = -1
    const: str = ""            # literal text (or "N") for op == const
    params: dict[str, str] = field(default_factory=dict)
    kind: str = "row"          # row | col | scalar


@dataclass
class Heavy:
    """The one matmul-like op of a graph, if any."""

    kind: str                  # linear | mm | bmm | conv1d
    a: int                     # operand indices
    b: int
    bias: int = -1
    b_transposed: bool = False  # linear weights are [N, K]
    c: int = -1                 # chains (kind *_chain): out = a @ (b @ c)
    conv: dict[str, int] = field(default_factory=dict)
    out_shape: list[int] = field(default_factory=list)
    beta: float = 1.0
    alpha: float = 1.0


@dataclass
class Program:
    inputs: list[dict[str, Any]]       # forward's placeholders (name, kind, shape, dtype)
    operands: list[Operand]
    values: list[Value]
    out: int
    out_shape: list[int]
    out_dtype: str
    heavy: Heavy | None = None
    reduce_axis: tuple[int, int] | None = None
    op_names: list[str] = field(default_factory=list)  # traced op names, for matching and errors

    @property
    def has_reduce(self) -> bool:
        return any(v.op == "reduce" for v in self.values)

    def signature(self) -> str:
        """The op sequence (after decomposition) the templates' patterns are matched against."""
        return " ".join(v.fn or v.op for v in self.values
                        if v.op not in ("load", "const") and not v.fn.startswith("round_"))
