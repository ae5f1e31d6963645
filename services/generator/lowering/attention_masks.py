"""Which keys an attention's mask leaves to each query: the key range a query block walks.

A causal mask (``is_causal``, a ``tril`` of ones, ``i >= j`` built from ``arange``), a sliding
window or any band written from indices makes the logits ``-inf`` for every key past a line
through the score matrix. Those keys contribute ``exp(-inf) = 0`` to the softmax: a query
block whose rows all mask a whole key block need not compute that block's scores at all.

:func:`key_bounds` reads this from the captured graph, not from data: it follows the logits
back through the operators that keep ``-inf`` (a ``where`` with a ``-inf`` branch, an
addition of a ``0``/``-inf`` bias, positive scalings, conversions, broadcasts) to predicates
written only from ``iota`` and constants, and turns them into linear bounds ``j <= a*i + c``
or ``j >= a*i + c`` on the key index ``j`` for the query index ``i``. A mask read from a
tensor (a padding mask, a registered buffer) gives no bound: its blocks are walked, as before.

Skipping is exact: a skipped block holds only ``-inf`` logits for every row of the query
block, and a row left with no finite logit ends as it did (0/0, or zeros where guarded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import sympy

from services.generator.lowering.schema import Node

# Operators that map -inf to -inf (for float operands) and keep every element in place.
_KEEPS_NEG_INF = ("prims.convert_element_type.default", "prims.clone.default", "aten.clone.default")
_COMPARE = {"prims.le.default": sympy.Le, "prims.lt.default": sympy.Lt, "prims.ge.default": sympy.Ge,
            "prims.gt.default": sympy.Gt, "prims.eq.default": sympy.Eq, "prims.ne.default": sympy.Ne}


@dataclass(frozen=True)
class KeyBound:
    """``j <= slope * i + offset`` (``upper``) or ``j >= slope * i + offset`` for every key ``j``
    that query ``i`` may see."""
    upper: bool
    slope: int
    offset: int


def _ref(value: Any) -> str | None:
    return value["ref"] if isinstance(value, dict) and "ref" in value else None


def _number(value: Any) -> float | None:
    if isinstance(value, dict) and "float" in value:
        return float(value["float"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


class _Graph:
    """Symbolic reading of the nodes below the logits, at an index given as sympy expressions."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self.nodes = nodes

    def _shape(self, name: str) -> list[int] | None:
        node = self.nodes.get(name)
        if node is None or len(node.outputs) != 1 or node.outputs[0] is None:
            return None
        return list(node.outputs[0].shape)

    def _source_index(self, node: Node, idx: list[Any]) -> list[Any] | None:
        """The operand's index for a broadcast's output index ``idx``."""
        src = _ref(node.args[0])
        in_shape = self._shape(src) if src else None
        if in_shape is None:
            return None
        out_shape, dims = node.args[1], node.args[2]
        return [0 if in_shape[k] == 1 and out_shape[d] != 1 else idx[d] for k, d in enumerate(dims)]

    def number(self, value: Any, idx: list[Any]) -> Any:
        """``value`` at ``idx`` as a sympy expression of the index, or None when it reads data."""
        constant = _number(value)
        if constant is not None:
            return sympy.nsimplify(constant) if math.isfinite(constant) else None
        node = self.nodes.get(_ref(value) or "")
        if node is None:
            return None
        t = node.target
        if t == "prims.iota.default":
            start, step = node.kwargs.get("start", 0), node.kwargs.get("step", 1)
            return start + step * idx[0] if isinstance(start, int) and isinstance(step, int) else None
        if t == "prims.broadcast_in_dim.default":
            src = self._source_index(node, idx)
            return None if src is None else self.number(node.args[0], src)
        if t in _KEEPS_NEG_INF:
            return self.number(node.args[0], idx)
        if t in ("prims.add.default", "prims.sub.default", "prims.mul.default"):
            a, b = self.number(node.args[0], idx), self.number(node.args[1], idx)
            if a is None or b is None:
                return None
            return a + b if t.startswith("prims.add") else a - b if t.startswith("prims.sub") else a * b
        if t == "prims.neg.default":
            a = self.number(node.args[0], idx)
            return None if a is None else -a
        return None

    def predicate(self, value: Any, idx: list[Any]) -> Any:
        """A boolean ``value`` at ``idx`` as a sympy proposition about the index, or None."""
        if isinstance(value, bool):
            return sympy.true if value else sympy.false
        node = self.nodes.get(_ref(value) or "")
        if node is None:
            return None
        t = node.target
        if t in _COMPARE:
            a, b = self.number(node.args[0], idx), self.number(node.args[1], idx)
            return None if a is None or b is None else _COMPARE[t](a, b)
        if t in ("aten.full_like.default", "prims.full_like.default", "prims.full.default", "aten.full.default"):
            fill = node.args[1]
            return (sympy.true if fill else sympy.false) if isinstance(fill, (bool, int)) else None
        if t == "prims.broadcast_in_dim.default":
            src = self._source_index(node, idx)
            return None if src is None else self.predicate(node.args[0], src)
        if t in ("prims.bitwise_and.default", "prims.bitwise_or.default"):
            # Exact or nothing: a condition half read from data would be misread by a ``where``
            # whose -inf branch it selects.
            a, b = self.predicate(node.args[0], idx), self.predicate(node.args[1], idx)
            if a is None or b is None:
                return None
            return sympy.And(a, b) if t == "prims.bitwise_and.default" else sympy.Or(a, b)
        if t == "prims.bitwise_not.default":
            a = self.predicate(node.args[0], idx)
            return None if a is None else sympy.Not(a)
        if t in _KEEPS_NEG_INF and node.outputs and node.outputs[0] is not None and node.outputs[0].dtype == "bool":
            return self.predicate(node.args[0], idx)
        return None

    def neg_inf(self, value: Any, idx: list[Any], depth: int = 0) -> Any:
        """A proposition about the index under which ``value`` is surely ``-inf`` (false when
        nothing is known). A tensor read from data is never assumed to hold ``+inf``."""
        constant = _number(value)
        if constant is not None:
            return sympy.true if constant == -math.inf else sympy.false
        node = self.nodes.get(_ref(value) or "")
        if node is None or depth > 32:
            return sympy.false
        t = node.target
        if t == "aten.scalar_tensor.default" or t in ("prims.full.default", "aten.full.default"):
            fill = _number(node.args[0] if t == "aten.scalar_tensor.default" else node.args[1])
            return sympy.true if fill == -math.inf else sympy.false
        if t == "prims.broadcast_in_dim.default":
            src = self._source_index(node, idx)
            return sympy.false if src is None else self.neg_inf(node.args[0], src, depth + 1)
        if t in _KEEPS_NEG_INF:
            meta = node.outputs[0] if node.outputs else None
            if meta is None or not meta.dtype.startswith(("float", "bfloat")):
                return sympy.false
            return self.neg_inf(node.args[0], idx, depth + 1)
        if t == "prims.add.default":
            return sympy.Or(self.neg_inf(node.args[0], idx, depth + 1), self.neg_inf(node.args[1], idx, depth + 1))
        if t in ("prims.mul.default", "prims.div.default"):
            factor = _number(node.args[1])
            if factor is None or not (0 < factor < math.inf):
                return sympy.false
            return self.neg_inf(node.args[0], idx, depth + 1)
        if t == "prims.sub.default":
            other = _number(node.args[1])
            return self.neg_inf(node.args[0], idx, depth + 1) if other is not None and math.isfinite(other) \
                else sympy.false
        if t == "prims.where.default":
            cond = self.predicate(node.args[0], idx)
            a, b = self.neg_inf(node.args[1], idx, depth + 1), self.neg_inf(node.args[2], idx, depth + 1)
            if cond is None:
                # A condition read from data: -inf either way only where both branches are.
                return sympy.And(a, b)
            return sympy.Or(sympy.And(cond, a), sympy.And(sympy.Not(cond), b))
        return sympy.false


def _linear_bound(clause: Any, i: sympy.Symbol, j: sympy.Symbol) -> list[KeyBound]:
    """``clause`` (a relation between integers) as bounds on ``j``; none when it is not linear in
    ``i`` and ``j`` with ``j``'s coefficient +-1."""
    if not isinstance(clause, (sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt, sympy.Eq)):
        return []
    expr = sympy.expand(clause.lhs - clause.rhs)
    if expr.free_symbols - {i, j}:
        return []
    poly = sympy.Poly(expr, i, j)
    if poly.total_degree() > 1:
        return []
    a, b, c = poly.coeff_monomial(i), poly.coeff_monomial(j), poly.coeff_monomial(1)
    if not all(x.is_integer for x in (a, b, c)) or abs(b) != 1:
        return []
    a, b, c = int(a), int(b), int(c)
    # b*j + a*i + c (<=, <, >=, >, ==) 0 on integers, written as "<= 0" forms.
    forms: list[tuple[int, int, int]] = []
    if isinstance(clause, (sympy.Le, sympy.Eq)):
        forms.append((a, b, c))
    if isinstance(clause, sympy.Lt):
        forms.append((a, b, c + 1))
    if isinstance(clause, (sympy.Ge, sympy.Eq)):
        forms.append((-a, -b, -c))
    if isinstance(clause, sympy.Gt):
        forms.append((-a, -b, -c + 1))
    # b*j + a*i + c <= 0: b = 1 gives j <= -a*i - c; b = -1 gives j >= a*i + c.
    return [KeyBound(True, -fa, -fc) if fb == 1 else KeyBound(False, fa, fc) for fa, fb, fc in forms]


def key_bounds(nodes: dict[str, Node], logits: str) -> list[KeyBound]:
    """Bounds on the keys each query may see, from the index-only part of ``logits``' mask
    (its last two dims are the query and key dims); empty when it has none."""
    node = nodes.get(logits)
    if node is None or len(node.outputs) != 1 or node.outputs[0] is None or len(node.outputs[0].shape) < 2:
        return []
    rank = len(node.outputs[0].shape)
    i, j = sympy.Symbol("i", integer=True, nonnegative=True), sympy.Symbol("j", integer=True, nonnegative=True)
    idx: list[Any] = [sympy.Symbol(f"z{d}", integer=True, nonnegative=True) for d in range(rank - 2)] + [i, j]
    masked = _Graph(nodes).neg_inf({"ref": logits}, idx)
    if masked in (sympy.true, sympy.false):
        return []
    seen = sympy.to_cnf(sympy.Not(masked), simplify=False)
    clauses = seen.args if isinstance(seen, sympy.And) else (seen,)
    return [bound for clause in clauses for bound in _linear_bound(clause, i, j)]
