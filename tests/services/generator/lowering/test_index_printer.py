"""Index expressions printed as Triton code keep the index algebra's floor semantics:
Triton's integer ``//`` and ``%`` round toward zero, so a base that can be negative must not
reach them as it is."""

from __future__ import annotations

import itertools
import math
import re

import pytest

from services.generator.lowering.indexing import FloorDiv, ModularIndexing, Printer, opaque_symbol, range_symbol

X, Y = range_symbol("x", 10), range_symbol("y", 7)
O = opaque_symbol("o")  # a value computed at run time: no known bounds
NAMES = {X: "x", Y: "y", O: "o"}


class _Truncating(int):
    """An int whose ``//`` and ``%`` round toward zero, as Triton's integer ops do."""

    def __floordiv__(self, other: int) -> _Truncating:
        return _Truncating(math.trunc(int(self) / int(other)))

    def __mod__(self, other: int) -> _Truncating:
        return _Truncating(int(self) - int(other) * math.trunc(int(self) / int(other)))

    def __add__(self, other: int) -> _Truncating:
        return _Truncating(int(self) + int(other))

    __radd__ = __add__

    def __sub__(self, other: int) -> _Truncating:
        return _Truncating(int(self) - int(other))

    def __rsub__(self, other: int) -> _Truncating:
        return _Truncating(int(other) - int(self))

    def __mul__(self, other: int) -> _Truncating:
        return _Truncating(int(self) * int(other))

    __rmul__ = __mul__


EXPRESSIONS = {
    "padded_position_floor": FloorDiv(X - 11 + 3 * Y, 4),
    "padded_position_mod": ModularIndexing(X - 11 + 3 * Y, 2, 3),
    "padded_position_mod_only": ModularIndexing(X - 13, 1, 5),
    "runtime_floor": FloorDiv(3 * O + X, 4),
    "runtime_mod": ModularIndexing(O + X, 3, 4),
    "non_negative": FloorDiv(X + 2 * Y, 3),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_printed_floor_and_mod_give_the_algebras_value_under_truncating_division(name: str) -> None:
    expr = EXPRESSIONS[name]
    code = Printer(NAMES)(expr)
    program = re.sub(r"(?<![\w.])(\d+)", r"T(\1)", code)
    for x, y, o in itertools.product(range(10), range(7), range(-20, 21, 7)):
        got = eval(program, {"T": _Truncating}, {"x": _Truncating(x), "y": _Truncating(y), "o": _Truncating(o)})
        assert int(got) == int(expr.subs({X: x, Y: y, O: o})), (code, x, y, o)


def test_a_non_negative_base_prints_plainly() -> None:
    """No shift where none is needed: most index expressions cost what they did."""
    assert Printer(NAMES)(FloorDiv(X + 2 * Y, 3)) == "((x + (2 * y)) // 3)"
    assert Printer(NAMES)(ModularIndexing(X + 7 * Y, 1, 10)) == "((x + (7 * y)) % 10)"
