"""Index expressions: how a kernel finds element (i0, i1, ...) of a tensor in memory.

Every value the lowering handles is reached through an index function: a view (permute,
slice, broadcast, reshape) is only a change of index, so chains of views cost no memory
traffic. Indices are sympy expressions over symbols with known ranges (a kernel's loop
variables) and over opaque symbols (an index loaded from memory, for gathers). Division and
remainder are the two functions below, simplified with those ranges so that common
reshapes fold back to plain multiply-adds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy

Expr = sympy.Expr

# Upper bounds (exclusive) of range symbols; symbols not here have unknown range.
_RANGES: dict[sympy.Symbol, int] = {}


def range_symbol(name: str, size: int) -> sympy.Symbol:
    # A Dummy is a symbol of its own at every call: kernels of different programs reuse names
    # (``x0`` of ``_k0_0_pointwise``) at other sizes, and sympy caches simplifications per
    # symbol, so a named Symbol would carry one kernel's range into another's indices.
    sym = sympy.Dummy(name, integer=True, nonnegative=True)
    _RANGES[sym] = max(1, int(size))
    return sym


def opaque_symbol(name: str) -> sympy.Symbol:
    """A value known only at run time (a loaded index): never simplified against a range."""
    return sympy.Symbol(name, integer=True)


def bounds(expr: Expr) -> tuple[float, float]:
    """Inclusive (lo, hi) of ``expr`` over its symbols' ranges; infinite where unknown."""
    if expr.is_Integer:
        return int(expr), int(expr)
    if isinstance(expr, sympy.Symbol):
        if expr in _RANGES:
            return 0, _RANGES[expr] - 1
        return -math.inf, math.inf
    if isinstance(expr, sympy.Add):
        lo = hi = 0.0
        for term in expr.args:
            a, b = bounds(term)
            lo, hi = lo + a, hi + b
        return lo, hi
    if isinstance(expr, sympy.Mul):
        lo, hi = 1.0, 1.0
        for factor in expr.args:
            a, b = bounds(factor)
            products = [x * y for x in (lo, hi) for y in (a, b) if not (math.isinf(x) and y == 0)
                        and not (math.isinf(y) and x == 0)]
            lo, hi = (min(products), max(products)) if products else (-math.inf, math.inf)
        return lo, hi
    if isinstance(expr, FloorDiv):
        a, b = bounds(expr.args[0])
        d = int(expr.args[1])
        return (a // d if not math.isinf(a) else a), (b // d if not math.isinf(b) else b)
    if isinstance(expr, ModularIndexing):
        lo, _ = bounds(expr.args[0])
        return (0, int(expr.args[2]) - 1) if lo >= 0 else (-math.inf, math.inf)
    return -math.inf, math.inf


class FloorDiv(sympy.Function):
    """``base // divisor`` for a positive constant divisor."""

    is_integer = True

    @classmethod
    def eval(cls, base: Expr, divisor: Expr) -> Expr | None:  # type: ignore[override]
        if not divisor.is_Integer:
            return None
        d = int(divisor)
        if d == 1:
            return base
        if base.is_Integer:
            return sympy.Integer(int(base) // d)
        lo, hi = bounds(base)
        if lo >= 0 and hi < d:
            return sympy.Integer(0)
        if isinstance(base, sympy.Add):
            # (a*d + b) // d == a + b // d when every term of the rest is a multiple of d
            # or the remaining part stays within [0, d).
            whole, rest = [], []
            for term in base.args:
                coeff, _ = term.as_coeff_Mul()
                (whole if coeff.is_Integer and int(coeff) % d == 0 else rest).append(term)
            if whole:
                rest_expr = sympy.Add(*rest)
                lo, hi = bounds(rest_expr)
                if lo >= 0 and hi < d:
                    return sympy.Add(*[t / d for t in whole])
            split = _unit_split(base, d)
            if split is not None:
                high, g = split
                return FloorDiv(high, d // g)
        if isinstance(base, sympy.Mul):
            coeff, other = base.as_coeff_Mul()
            if coeff.is_Integer and int(coeff) % d == 0:
                return (int(coeff) // d) * other
        if isinstance(base, FloorDiv) and base.args[1].is_Integer:
            return FloorDiv(base.args[0], int(base.args[1]) * d)
        return None


class ModularIndexing(sympy.Function):
    """``(base // divisor) % modulus`` for positive constants."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, base: Expr, divisor: Expr, modulus: Expr) -> Expr | None:  # type: ignore[override]
        if not (divisor.is_Integer and modulus.is_Integer):
            return None
        d, m = int(divisor), int(modulus)
        if m == 1:
            return sympy.Integer(0)
        if base.is_Integer:
            return sympy.Integer((int(base) // d) % m)
        lo, hi = bounds(base)
        if lo >= 0 and hi < d * m:
            return FloorDiv(base, d)
        if isinstance(base, sympy.Add):
            # Terms that are multiples of d*m do not change the result.
            kept = []
            for term in base.args:
                coeff, _ = term.as_coeff_Mul()
                if not (coeff.is_Integer and int(coeff) % (d * m) == 0):
                    kept.append(term)
            if len(kept) < len(base.args):
                return ModularIndexing(sympy.Add(*kept), d, m)
            split = _unit_split(base, d)
            if split is not None:
                high, g = split
                return ModularIndexing(high, d // g, m)
        return None


def _unit_split(base: sympy.Add, d: int) -> tuple[Expr, int] | None:
    """``(a, g)`` when ``base == g*a + b`` with ``g`` a divisor of ``d`` above 1 and ``b``
    within [0, g): then ``base // d == a // (d / g)`` (a K index ``tap * channels + c`` of a
    convolution, ``c < channels``, divided by a multiple of ``channels``). The largest such
    ``g`` is taken."""
    candidates = sorted({math.gcd(d, int(t.as_coeff_Mul()[0])) for t in base.args
                         if t.as_coeff_Mul()[0].is_Integer}, reverse=True)
    for g in candidates:
        if g <= 1:
            continue
        whole = [t for t in base.args if t.as_coeff_Mul()[0].is_Integer and int(t.as_coeff_Mul()[0]) % g == 0]
        rest = [t for t in base.args if t not in whole]
        if not whole or not rest:
            continue
        lo, hi = bounds(sympy.Add(*rest))
        if lo >= 0 and hi < g:
            return sympy.Add(*[t / g for t in whole]), g
    return None


def fold(expr: Expr) -> Expr:
    """Undo split-then-join index arithmetic: ``c*((a // s) % m) + c*m*(a // (s*m))`` is
    ``c*(a // s)`` (and ``a // 1`` is ``a``), so a reshape followed by its inverse (heads
    split out of a batch and joined back) reads as the plain index it is."""
    expr = sympy.sympify(expr)
    if not isinstance(expr, sympy.Add):
        return expr
    terms = [t.as_coeff_Mul() for t in expr.args]
    changed = True
    while changed:
        changed = False
        for i, (c1, t1) in enumerate(terms):
            if not isinstance(t1, ModularIndexing):
                continue
            a, s, m = t1.args
            target = FloorDiv(a, int(s) * int(m))
            for j, (c2, t2) in enumerate(terms):
                if j != i and t2 == target and c2 == c1 * m:
                    merged = (c1, FloorDiv(a, int(s)))
                    terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [merged]
                    changed = True
                    break
            if changed:
                break
    return sympy.Add(*[c * t for c, t in terms])


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= max(1, int(size))
    return list(reversed(strides))


def linear(index: Sequence[Expr], shape: Sequence[int]) -> Expr:
    """Offset of ``index`` in a contiguous tensor of ``shape``."""
    return sympy.Add(*[i * s for i, s in zip(index, contiguous_strides(shape), strict=True)]) if index \
        else sympy.Integer(0)


def delinearize(flat: Expr, shape: Sequence[int]) -> list[Expr]:
    """The multi-index of position ``flat`` in a contiguous tensor of ``shape``."""
    strides = contiguous_strides(shape)
    return [ModularIndexing(flat, s, max(1, int(n))) if n != 1 else sympy.Integer(0)
            for s, n in zip(strides, shape, strict=True)]


def numel(shape: Sequence[int]) -> int:
    return math.prod(int(s) for s in shape)


class Printer:
    """Prints an index expression as Triton code, given the code name of each symbol."""

    def __init__(self, names: dict[sympy.Symbol, str]) -> None:
        self.names = names

    def __call__(self, expr: Expr) -> str:
        expr = sympy.expand(expr) if not expr.has(FloorDiv, ModularIndexing) else fold(expr)
        return self.p(expr)

    def p(self, expr: Expr) -> str:
        if expr.is_Integer:
            return str(int(expr))
        if isinstance(expr, sympy.Symbol):
            return self.names[expr]
        if isinstance(expr, sympy.Add):
            # Terms over the same index symbols have one shape (a tile's rows, its columns,
            # the whole tile): each such group is summed on its own, and the groups last, so
            # a sum of row and column terms costs one whole-tile addition, not one per term.
            groups: dict[tuple[str, ...], list[Expr]] = {}
            for term in sorted(expr.args, key=sympy.default_sort_key):
                key = tuple(sorted(self.names.get(s, str(s)) for s in term.free_symbols))
                groups.setdefault(key, []).append(term)
            constant = groups.pop((), [])
            ordered = [groups[key] for key in sorted(groups, key=lambda key: (len(key), key))]
            if not ordered:
                return self._sum(constant)
            ordered[0] = constant + ordered[0]
            if len(ordered) == 1:
                return self._sum(ordered[0])
            return self._sum([sympy.Add(*group, evaluate=False) if len(group) > 1 else group[0] for group in ordered])
        if isinstance(expr, sympy.Mul):
            coeff, rest = expr.as_coeff_Mul()
            factors = [self.p(f) for f in sympy.Mul.make_args(rest)]
            if coeff != 1:
                factors.insert(0, str(int(coeff)) if coeff.is_Integer else f"({coeff})")
            return "(" + " * ".join(factors) + ")"
        if isinstance(expr, FloorDiv):
            return self._floor_div(expr.args[0], int(expr.args[1]), 1, bounds(expr.args[0])[0])
        if isinstance(expr, ModularIndexing):
            base, d, m = expr.args
            lo = bounds(base)[0]
            q = self._floor_div(base, int(d), int(m), lo)
            if lo == -math.inf:  # the quotient may be negative: a floor modulus
                return f"((({q} % {int(m)}) + {int(m)}) % {int(m)})"
            return f"({q} % {int(m)})"
        raise NotImplementedError(f"cannot print index expression {expr}")

    def _floor_div(self, base: Expr, d: int, period: int, lo: float) -> str:
        """``base // d`` as the index algebra means it (rounded down), where ``% period`` is
        all that is read of it. Triton's integer ``//`` and ``%`` round toward zero: a base
        that can be negative (a padded convolution's input position, ``-1 + kh + oh``, read
        through a reshaped view's floor and mod) is shifted by a multiple of ``d * period``
        that makes it non-negative, and the shift's quotient taken back off (a multiple of
        ``period``, so nothing to take off under a modulus). ``lo``: the base's lower bound."""
        if lo >= 0 or (d == 1 and (period == 1 or lo == -math.inf)):
            return self.p(base) if d == 1 else f"({self.p(base)} // {d})"
        if lo == -math.inf:
            # Unbounded below: the remainder brought into [0, d) and subtracted first.
            b = self.p(base)
            return f"(({b} - (({b} % {d}) + {d}) % {d}) // {d})"
        step = d * period
        shift = step * math.ceil(-lo / step)
        shifted = self.p(base + shift) if d == 1 else f"({self.p(base + shift)} // {d})"
        return shifted if period > 1 else f"({shifted} - {shift // d})"

    def _sum(self, terms: list[Expr]) -> str:
        out = self._term(terms[0])
        for term in terms[1:]:
            coeff, _rest = term.as_coeff_Mul()
            if coeff.is_Integer and int(coeff) < 0:
                out += f" - {self._term(-term)}"
            else:
                out += f" + {self._term(term)}"
        return f"({out})"

    def _term(self, term: Expr) -> str:
        """A summand: an unevaluated group sum keeps its own order (see ``p``)."""
        if isinstance(term, sympy.Add):
            return self._sum(list(term.args))
        return self.p(term)
