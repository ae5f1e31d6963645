"""Elementwise operators: PyTorch's primitive math, comparisons, casts, ``where`` and fills.

Each becomes a lazy value: its code is written into whichever kernel reads it. Scalars
arrive as Python numbers and are written as literals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from services.generator.lowering.ir import (FLOATS, KernelWriter, Lazy, RuntimeScalar, Unsupported, Value,
                                           compute_dtype)
from services.generator.lowering.kernels import rounded, tl_type
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

Operand = Value | RuntimeScalar | int | float | bool


def scalar_code(k: KernelWriter, value: RuntimeScalar | int | float | bool, dtype: str) -> str:
    """A scalar operand: a literal, or the kernel argument carrying a module attribute."""
    if isinstance(value, RuntimeScalar):
        return k.scalar(value)
    return literal(value, dtype)


def literal(value: int | float | bool, dtype: str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if dtype in FLOATS or isinstance(value, float):
        value = float(value)
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    return str(int(value))


def out_meta(node: Node) -> tuple[tuple[int, ...], str]:
    meta = node.outputs[0]
    if meta is None:
        raise Unsupported(f"{node.target} produces no tensor")
    return tuple(meta.shape), meta.dtype


def broadcast_index(value: Value, idx: Sequence[Any]) -> list[Any]:
    """The index of ``value`` at output index ``idx`` when it broadcasts against the output
    (fewer dimensions, or size-1 ones: a 0-d tensor operand of a primitive)."""
    import sympy

    rank = len(value.shape)
    tail = list(idx[len(idx) - rank:]) if rank else []
    return [sympy.Integer(0) if size == 1 else i for size, i in zip(value.shape, tail, strict=True)]


def load_at(k: KernelWriter, value: Value, idx: Sequence[Any], mask: str | None) -> str:
    return value.load(k, broadcast_index(value, idx) if len(value.shape) != len(idx) else idx, mask)


def elementwise(shape: Sequence[int], dtype: str, operands: Sequence[Operand], operand_dtype: str,
                code: Callable[[KernelWriter, list[str]], str], result_dtype: str | None = None) -> Lazy:
    """A value computed from ``operands`` at the same index; tensors are cast to
    ``operand_dtype``'s compute type first, scalars become literals of it."""
    work = compute_dtype(operand_dtype)
    result = compute_dtype(result_dtype or dtype)
    cost = 1 + sum(o.cost for o in operands if isinstance(o, Value))

    def fn(k: KernelWriter, idx: Sequence[Any], mask: str | None) -> str:
        names = []
        for o in operands:
            if isinstance(o, Value):
                names.append(k.cast(load_at(k, o, idx, mask), work))
            else:
                names.append(scalar_code(k, o, work))
        return k.var(code(k, names), result)

    return Lazy(shape, dtype, fn, cost)


def _helper(name: str) -> Callable[[KernelWriter, list[str]], str]:
    def code(k: KernelWriter, a: list[str]) -> str:
        k.helpers.add(name)
        return f"{name}({', '.join(a)})"

    return code


def _fmt(template: str) -> Callable[[KernelWriter, list[str]], str]:
    return lambda k, a: template.format(*a)


UNARY_FLOAT: dict[str, Callable[[KernelWriter, list[str]], str]] = {
    "exp": _fmt("tl.exp({0})"), "exp2": _fmt("tl.exp2({0})"), "log": _fmt("tl.log({0})"),
    "log2": _fmt("tl.log2({0})"), "log10": _fmt("(tl.log({0}) * 0.4342944819032518)"),
    "sqrt": _fmt("tl.sqrt({0})"), "rsqrt": _fmt("(1.0 / tl.sqrt({0}))"), "sin": _fmt("tl.sin({0})"),
    "cos": _fmt("tl.cos({0})"), "tan": _fmt("(tl.sin({0}) / tl.cos({0}))"), "erf": _fmt("tl.erf({0})"),
    "erfc": _fmt("(1.0 - tl.erf({0}))"), "floor": _fmt("tl.floor({0})"), "ceil": _fmt("tl.ceil({0})"),
    "tanh": _helper("_kv_tanh"), "expm1": _helper("_kv_expm1"), "log1p": _helper("_kv_log1p"),
    "atan": _helper("_kv_atan"), "round": _helper("_kv_round"), "trunc": _helper("_kv_trunc"),
    "erf_inv": _helper("_kv_erfinv"), "lgamma": _helper("_kv_lgamma"), "digamma": _helper("_kv_digamma"),
    "sinh": _fmt("((tl.exp({0}) - tl.exp(-{0})) * 0.5)"), "cosh": _fmt("((tl.exp({0}) + tl.exp(-{0})) * 0.5)"),
    "asinh": lambda k, a: _signed(k, a[0], f"tl.log(tl.abs({a[0]}) + tl.sqrt({a[0]} * {a[0]} + 1.0))"),
    "acosh": _fmt("tl.log({0} + tl.sqrt({0} * {0} - 1.0))"),
    "atanh": lambda k, a: (k.helpers.add("_kv_log1p") or f"(0.5 * _kv_log1p(2.0 * {a[0]} / (1.0 - {a[0]})))"),
    "asin": lambda k, a: (k.helpers.add("_kv_atan2") or f"_kv_atan2({a[0]}, tl.sqrt(1.0 - {a[0]} * {a[0]}))"),
    "acos": lambda k, a: (k.helpers.add("_kv_atan2") or f"_kv_atan2(tl.sqrt(1.0 - {a[0]} * {a[0]}), {a[0]})"),
    "cbrt": lambda k, a: _signed(k, a[0], f"tl.exp2(tl.log2(tl.abs({a[0]})) * (1.0 / 3.0))"),
}


def _signed(k: KernelWriter, x: str, magnitude: str) -> str:
    return f"tl.where({x} < 0, -({magnitude}), {magnitude})"


def _unary(shape: Sequence[int], dtype: str, a: Operand, code: Callable[[KernelWriter, list[str]], str]) -> Lazy:
    return elementwise(shape, dtype, [a], dtype, code)


@lowers(*[f"prims.{n}.default" for n in UNARY_FLOAT])
def unary_float(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    name = node.target.split(".")[1]
    if dtype not in FLOATS and name in ("floor", "ceil", "round", "trunc"):
        return args[0]  # an integer is its own floor
    return _unary(shape, dtype, args[0], UNARY_FLOAT[name])


@lowers("prims.neg.default")
def neg(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return _unary(shape, dtype, args[0], _fmt("(-{0})"))


@lowers("prims.abs.default")
def abs_(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return _unary(shape, dtype, args[0], _fmt("tl.abs({0})"))


@lowers("prims.reciprocal.default")
def reciprocal(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return _unary(shape, dtype, args[0], _fmt("(1.0 / {0})"))


@lowers("prims.sign.default")
def sign(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    work = tl_type(compute_dtype(dtype))
    return _unary(shape, dtype, args[0], _fmt("tl.where({0} > 0, 1, tl.where({0} < 0, -1, 0)).to(%s)" % work))


@lowers("prims.signbit.default")
def signbit(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    src = args[0].dtype
    return elementwise(shape, dtype, [args[0]], src, _fmt("(({0} < 0) | (({0} == 0) & ((1.0 / {0}) < 0)))"))


@lowers("prims.isfinite.default")
def isfinite(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    src = args[0].dtype
    if src not in FLOATS:
        return elementwise(shape, dtype, [args[0]], src, _fmt("({0} == {0})"))
    return elementwise(shape, dtype, [args[0]], src, _fmt("(({0} == {0}) & (tl.abs({0}) != float('inf')))"))


@lowers("prims.bitwise_not.default")
def bitwise_not(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    if dtype == "bool":
        return elementwise(shape, dtype, [args[0]], dtype, _fmt("({0} == 0)"))
    if dtype in _UNSIGNED_BITS:
        # Triton writes ~x as x ^ -1, which an unsigned type cannot hold (the interpreter
        # refuses it): xor with the type's all-ones value instead, the same bits.
        return _unary(shape, dtype, args[0], _fmt(f"({{0}} ^ {(1 << _UNSIGNED_BITS[dtype]) - 1})"))
    return _unary(shape, dtype, args[0], _fmt("(~{0})"))


_UNSIGNED_BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


ARITH = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "shift_left": "({0} << {1})", "shift_right_arithmetic": "({0} >> {1})",
    "hypot": "tl.sqrt({0} * {0} + {1} * {1})",
}
COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _operand_dtype(args: Sequence[Any], fallback: str) -> str:
    for a in args:
        if isinstance(a, Value):
            return a.dtype
    return fallback


@lowers(*[f"prims.{n}.default" for n in ARITH])
def arithmetic(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    name = node.target.split(".")[1]
    if dtype == "bool" and name in ("add", "mul"):
        name = {"add": "bitwise_or", "mul": "bitwise_and"}[name]
    out = elementwise(shape, dtype, args[:2], dtype, _fmt(ARITH[name]))
    if name == "mul" and dtype in FLOATS:
        out.scaled = _times_constant(args[0], args[1])
    return out


def _times_constant(a: Any, b: Any) -> tuple[Value, float] | None:
    """(the tensor, the constant) of a product of a float tensor and a plain number."""
    for tensor, factor in ((a, b), (b, a)):
        if isinstance(tensor, Value) and isinstance(factor, (int, float)) and not isinstance(factor, bool) \
                and tensor.dtype in FLOATS and math.isfinite(float(factor)):
            return tensor, float(factor)
    return None


@lowers("prims.div.default")
def div(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    # prims.div truncates for integers (C division, as Triton's // does) and divides floats.
    op = "({0} / {1})" if dtype in FLOATS else "({0} // {1})"
    return elementwise(shape, dtype, args[:2], dtype, _fmt(op))


@lowers("prims.fmod.default")
def fmod(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """C's remainder (the dividend's sign). Written out for floats: ``%`` on floats is not the
    same operation on every Triton backend."""
    shape, dtype = out_meta(node)
    if dtype in FLOATS:
        return elementwise(shape, dtype, args[:2], dtype, lambda k, a: (
            k.helpers.add("_kv_fmod") or f"_kv_fmod({a[0]}, {a[1]})"))
    return elementwise(shape, dtype, args[:2], dtype, _fmt("({0} % {1})"))


@lowers("prims.remainder.default")
def remainder(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    if dtype in FLOATS:
        code = _fmt("({0} - tl.floor({0} / {1}) * {1})")
    else:  # Python's sign rule: the result takes the divisor's sign
        code = _fmt("tl.where((({0} % {1}) != 0) & ((({0} % {1}) < 0) != ({1} < 0)), ({0} % {1}) + {1}, {0} % {1})")
    return elementwise(shape, dtype, args[:2], dtype, code)


@lowers("prims.pow.default")
def pow_(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    base, exponent = args[:2]
    if isinstance(exponent, (int, float)) and float(exponent) == int(exponent) and 0 <= exponent <= 8:
        n = int(exponent)
        if n == 0:
            return elementwise(shape, dtype, [base], dtype, _fmt("({0} * 0 + 1)"))
        return elementwise(shape, dtype, [base], dtype, _fmt("(" + " * ".join(["{0}"] * n) + ")"))
    if isinstance(exponent, (int, float)) and exponent == 0.5:
        return elementwise(shape, dtype, [base], dtype, _fmt("tl.sqrt({0})"))
    if isinstance(exponent, (int, float)) and exponent == -1:
        return elementwise(shape, dtype, [base], dtype, _fmt("(1.0 / {0})"))
    if isinstance(exponent, (int, float)) and exponent == -0.5:
        return elementwise(shape, dtype, [base], dtype, _fmt("(1.0 / tl.sqrt({0}))"))
    if dtype not in FLOATS:
        raise Unsupported("integer pow with a tensor or negative exponent")
    return elementwise(shape, dtype, [base, exponent], dtype, _helper("_kv_pow"))


@lowers("prims.atan2.default")
def atan2(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return elementwise(shape, dtype, args[:2], dtype, _helper("_kv_atan2"))


@lowers("prims.maximum.default", "prims.fmax.default")
def maximum(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    if dtype in FLOATS and node.target.startswith("prims.maximum"):
        return elementwise(shape, dtype, args[:2], dtype, _helper("_kv_max"))
    if dtype in FLOATS:  # fmax ignores NaN
        return elementwise(shape, dtype, args[:2], dtype,
                           _fmt("tl.where(({0} > {1}) | ({1} != {1}), {0}, {1})"))
    return elementwise(shape, dtype, args[:2], dtype, _fmt("tl.maximum({0}, {1})"))


@lowers("prims.minimum.default", "prims.fmin.default")
def minimum(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    if dtype in FLOATS and node.target.startswith("prims.minimum"):
        return elementwise(shape, dtype, args[:2], dtype, _helper("_kv_min"))
    if dtype in FLOATS:
        return elementwise(shape, dtype, args[:2], dtype,
                           _fmt("tl.where(({0} < {1}) | ({1} != {1}), {0}, {1})"))
    return elementwise(shape, dtype, args[:2], dtype, _fmt("tl.minimum({0}, {1})"))


@lowers(*[f"prims.{n}.default" for n in COMPARE])
def compare(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    op = COMPARE[node.target.split(".")[1]]
    src = _operand_dtype(args, "float32")
    if src == "bool":
        src = "int32"  # compare booleans as integers
    return elementwise(shape, dtype, args[:2], src, _fmt("({0} %s {1})" % op), result_dtype="bool")


@lowers("prims.where.default")
def where(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    pred, x, y = args[:3]
    work = compute_dtype(dtype)
    cost = 1 + sum(o.cost for o in (pred, x, y) if isinstance(o, Value))

    def fn(k: KernelWriter, idx: Sequence[Any], mask: str | None) -> str:
        p = k.cast(load_at(k, pred, idx, mask), "bool") if isinstance(pred, Value) else literal(pred, "bool")
        a = k.cast(load_at(k, x, idx, mask), work) if isinstance(x, Value) else scalar_code(k, x, work)
        c = k.cast(load_at(k, y, idx, mask), work) if isinstance(y, Value) else scalar_code(k, y, work)
        if not isinstance(x, Value) and not isinstance(y, Value):
            a = f"tl.full([1], {a}, {tl_type(work)})"
        return k.var(f"tl.where({p}, {a}, {c})", work)

    return Lazy(shape, dtype, fn, cost)


@lowers("prims.convert_element_type.default")
def convert(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    src = args[0]
    if not isinstance(src, Value):
        return constant(shape, dtype, src)
    if src.dtype == dtype:
        return src
    target = compute_dtype(dtype)

    def fn(k: KernelWriter, idx: Sequence[Any], mask: str | None) -> str:
        v = src.load(k, idx, mask)
        if dtype == "bool":
            return k.var(f"({v} != 0)", "bool")
        if dtype in ("float16", "bfloat16"):
            # Round through the narrow type, as PyTorch stores it, then compute in float32.
            return rounded(k, k.cast(v, "float32"), dtype)
        return k.cast(v, target)

    if src.dtype in ("float16", "bfloat16") and dtype == "float32":
        return widened(src)
    out = Lazy(shape, dtype, fn, src.cost + 1)
    if src.dtype == "bool" and dtype in ("int8", "int16", "int32", "int64", "uint8"):
        out.from_bool = src
    return out


def widened(src: Value) -> Lazy:
    """A 16-bit value read as float32 (exact)."""
    out = Lazy(src.shape, "float32", lambda k, idx, mask: k.cast(src.load(k, idx, mask), "float32"), src.cost + 1)
    out.widens = src  # exact: stored for several readers, it is stored narrow (CaseLowerer.share)
    return out


def constant(shape: Sequence[int], dtype: str, value: int | float | bool | RuntimeScalar) -> Lazy:
    work = compute_dtype(dtype)
    if isinstance(value, RuntimeScalar):
        # A module attribute read at run time: a kernel argument, broadcast like a literal.
        return Lazy(shape, dtype, lambda k, idx, mask: k.var(f"(tl.zeros([1], {tl_type(work)}) + {k.scalar(value)})",
                                                             work), 0)
    lit = literal(value, work)
    return Lazy(shape, dtype, lambda k, idx, mask: k.var(f"tl.full([1], {lit}, {tl_type(work)})", work), 0)


@lowers("aten.scalar_tensor.default", "prims.scalar_tensor.default")
def scalar_tensor(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return constant(shape, dtype, args[0])


@lowers("prims.full.default", "aten.full.default")
def full(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return constant(shape, dtype, args[1])


@lowers("aten.full_like.default", "prims.full_like.default")
def full_like(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    return constant(shape, dtype, args[1])


@lowers("prims.empty_strided.default", "aten.empty_permuted.default", "aten.empty.memory_format",
        "aten.empty_strided.default")
def empty(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    # An empty tensor's contents are undefined; a functional graph never reads them before
    # they are written, so zeros serve.
    shape, dtype = out_meta(node)
    return constant(shape, dtype, 0)


@lowers("prims.iota.default")
def iota(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    start, step = kwargs.get("start", 0), kwargs.get("step", 1)
    work = compute_dtype(dtype)

    def fn(k: KernelWriter, idx: Sequence[Any], mask: str | None) -> str:
        if getattr(idx[0], "is_Integer", False):
            return k.var(f"tl.full([1], {literal(start + step * int(idx[0]), work)}, {tl_type(work)})", work)
        i = k.var(f"({k.index(idx[0])})", "int64" if k.wide_index else "int32")
        return k.cast(k.var(f"({literal(start, 'int64')} + {i} * {literal(step, 'int64')})",
                            "int64" if k.wide_index else "int32"), work)

    return Lazy(shape, dtype, fn, 1)


@lowers("aten._assert_tensor_metadata.default", "aten._assert_scalar.default", "aten.sym_constrain_range_for_size.default")
def assertion(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Checks export leaves in the graph about its inputs: nothing to compute."""
    return None


@lowers("aten.__lshift__.Scalar", "aten.__lshift__.Tensor", "aten.bitwise_left_shift.Tensor",
        "aten.__rshift__.Scalar", "aten.__rshift__.Tensor", "aten.bitwise_right_shift.Tensor",
        "prims.shift_right_logical.default")
def shift(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    op = "<<" if "lshift" in node.target or "left" in node.target else ">>"
    return elementwise(shape, dtype, args[:2], dtype, _fmt("({0} %s {1})" % op))


# Operators whose result element i reads element i of each tensor operand, all at one shape
# (prims take their operands already broadcast). lower.py keeps a value read twice within a
# chain of them inlined: the kernel that computes the chain computes the value once.
ELEMENTWISE = frozenset(
    [f"prims.{n}.default" for n in (*UNARY_FLOAT, *ARITH, *COMPARE)]
    + [f"prims.{n}.default" for n in ("neg", "abs", "reciprocal", "sign", "signbit", "isfinite", "bitwise_not",
                                      "div", "fmod", "remainder", "pow", "atan2", "maximum", "fmax", "minimum",
                                      "fmin", "where", "convert_element_type")])
