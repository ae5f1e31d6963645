"""The lowering's values and the writer of one Triton kernel's source.

A value is a tensor the program computes, reached through ``load(kernel, index, mask)``:

* :class:`Stored` - in memory (a forward argument, a parameter, a kernel's output buffer),
  contiguous, so element ``index`` lies at ``linear(index, shape)``;
* :class:`Lazy` - computed where it is read: a pointwise function of other values at the
  same or a transformed index (views are lazy values whose function only moves the index).

Reading a lazy value inside a kernel inlines its computation there: a chain of pointwise
operators and views becomes one kernel with one load per input, whichever kernel reads it
(another pointwise kernel, a reduction's loop, a matrix product's tiles).

Compute types: 16-bit floats are computed in float32 (as PyTorch accumulates them) and
rounded when stored; other types are computed as they are.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import sympy

from services.generator.lowering.indexing import Expr, Printer, linear, numel, opaque_symbol

# torch dtype name -> Triton type of the pointer element
TL_TYPES = {
    "float16": "tl.float16", "bfloat16": "tl.bfloat16", "float32": "tl.float32", "float64": "tl.float64",
    "int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "int64": "tl.int64", "uint8": "tl.uint8",
    "bool": "tl.int1",
}
FLOATS = {"float16", "bfloat16", "float32", "float64"}
INTS = {"int8", "int16", "int32", "int64", "uint8"}


class Unsupported(Exception):
    """The lowering cannot produce a kernel for this construct; the message names it."""


def compute_dtype(dtype: str) -> str:
    """The type a value is computed in: 16-bit floats widen to float32."""
    if dtype in ("float16", "bfloat16"):
        return "float32"
    if dtype not in TL_TYPES:
        raise Unsupported(f"tensors of dtype {dtype} are not supported by the kernel lowering")
    return dtype


@dataclass(eq=False)
class Buffer:
    """A contiguous tensor in memory, named as the wrapper names it."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    # Allocated filled with zeros: a grid-wide barrier's arrival counter starts from 0.
    zeroed: bool = False

    @property
    def numel(self) -> int:
        return numel(self.shape)


class Value:
    shape: tuple[int, ...]
    dtype: str
    cost: int = 0  # operators inlined into each reader

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        raise NotImplementedError

    @property
    def numel(self) -> int:
        return numel(self.shape)


class Stored(Value):
    def __init__(self, buffer: Buffer) -> None:
        self.buffer = buffer
        self.shape = buffer.shape
        self.dtype = buffer.dtype
        self.cost = 0

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        return k.load(self.buffer, linear(index, self.shape), mask)


Loader = Callable[["KernelWriter", Sequence[Expr], "str | None"], str]


class Lazy(Value):
    def __init__(self, shape: Sequence[int], dtype: str, fn: Loader, cost: int, view_of: Value | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.fn = fn
        self.cost = cost
        self.view_of = view_of  # set for pure index changes of another value (no computation)
        # Set when this value is a 16-bit float value widened to float32: exact, so a builder
        # that stores it for several readers stores the narrow one (half the bytes both ways).
        self.widens: Value | None = None
        # Set when this value is another float value times a constant (base, factor): a
        # product of two such values is the product of their bases times both factors.
        self.scaled: tuple[Value, float] | None = None
        # Set when this value is a boolean value cast to an integer type (every element 0 or
        # 1): a sum of it fits 32 bits over fewer than 2**31 elements, whatever its type.
        self.from_bool: Value | None = None
        # The index change itself, where one maps the view's index to ``view_of``'s.
        self.remap: Callable[[Sequence[Expr]], Sequence[Expr]] | None = None

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        return self.fn(k, index, mask)


def view(base: Value, shape: Sequence[int], remap: Callable[[Sequence[Expr]], Sequence[Expr]],
         dtype: str | None = None) -> Lazy:
    """``base`` read through an index change: element ``i`` of the view is ``base[remap(i)]``."""
    out = Lazy(shape, dtype or base.dtype, lambda k, idx, mask: base.load(k, remap(idx), mask), base.cost,
               view_of=base)
    out.remap = remap
    return out


def peel_views(value: Value, accept: Callable[[Lazy], bool] | None = None) -> tuple[Value, list[Lazy]]:
    """``value``'s chain of index changes of a value of the same type (``view``), outermost
    first, down to the first value that is none (or that ``accept`` refuses), and that value."""
    views: list[Lazy] = []
    current = value
    while (isinstance(current, Lazy) and current.view_of is not None and current.remap is not None
           and current.dtype == current.view_of.dtype and (accept is None or accept(current))):
        views.append(current)
        current = current.view_of
    return current, views


def on_views(base: Value, views: Sequence[Lazy]) -> Value:
    """``base`` read through ``views`` (``peel_views``' list, outermost first)."""
    for step in reversed(views):
        assert step.remap is not None
        base = view(base, step.shape, step.remap, base.dtype)
    return base


@dataclass(frozen=True)
class RuntimeScalar:
    """A float the graph reads from a module attribute (``self.scale``): passed to kernels
    as an argument, read from the module at run time."""

    attr: str
    value: float


@dataclass
class Param:
    name: str
    kind: str  # "ptr" (a buffer), "scalar" (a RuntimeScalar) or "constexpr"


@dataclass
class KernelWriter:
    """Accumulates one kernel: its parameters, its body lines (with common subexpressions
    shared), the names index symbols have, and the helper functions it calls."""

    name: str
    params: list[Param] = field(default_factory=list)
    buffers: dict[int, tuple[Buffer, str]] = field(default_factory=dict)
    scalars: dict[RuntimeScalar, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    indent: int = 1
    names: dict[sympy.Symbol, str] = field(default_factory=dict)
    aliases: dict[Expr, str] = field(default_factory=dict)  # index expressions with a ready name
    helpers: set[str] = field(default_factory=set)
    dtypes: dict[str, str] = field(default_factory=dict)
    _scopes: list[dict[str, str]] = field(default_factory=lambda: [{}])
    _counter: Iterator[int] = field(default_factory=itertools.count)
    wide_index: bool = False  # int64 offsets (tensors past 2**31 elements)
    # bfloat16 roundings take the packed PTX form (kernels.rounded), for kernels whose rounded
    # values are all tiles of many values (attention's scores and probabilities): Triton
    # refuses the two-value packing on a one-element tile (a reduction's XBLOCK=1 result).
    packed_rounding: bool = False
    # Values that are a buffer's elements as loaded (widened or not): value -> (the raw load,
    # its mask, the buffer's dtype). Masked lanes of such a load hold 0.
    loads: dict[str, tuple[str, str | None, str]] = field(default_factory=dict)
    # Every (buffer, element offset) a load reads, in order: where a value's inputs lie.
    load_offsets: list[tuple[Buffer, Expr]] = field(default_factory=list)

    # -- naming -------------------------------------------------------------------------
    def fresh(self, prefix: str = "t") -> str:
        return f"{prefix}{next(self._counter)}"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        """An indented block (a loop): values computed inside stay inside."""
        self.line(header)
        self.indent += 1
        self._scopes.append({})
        try:
            yield
        finally:
            self._scopes.pop()
            self.indent -= 1

    def var(self, code: str, dtype: str) -> str:
        """A named value for ``code``, shared with any earlier identical computation in scope."""
        for scope in reversed(self._scopes):
            if code in scope:
                return scope[code]
        name = self.fresh()
        self.line(f"{name} = {code}")
        self._scopes[-1][code] = name
        self.dtypes[name] = dtype
        return name

    def dtype(self, var: str) -> str:
        return self.dtypes.get(var, "float32")

    # -- memory -------------------------------------------------------------------------
    def pointer(self, buf: Buffer) -> str:
        entry = self.buffers.get(id(buf))
        if entry is None:
            pname = f"{buf.name}_ptr"
            self.buffers[id(buf)] = (buf, pname)
            self.params.append(Param(pname, "ptr"))
            if buf.numel >= 2**31:
                self.wide_index = True
            return pname
        return entry[1]

    def scalar(self, value: RuntimeScalar) -> str:
        name = self.scalars.get(value)
        if name is None:
            label = value.attr
            name = "s_" + "".join(c if c.isalnum() else "_" for c in label)
            self.scalars[value] = name
            self.params.append(Param(name, "scalar"))
        return name

    def index(self, expr: Expr) -> str:
        expr = sympy.sympify(expr)
        if expr in self.aliases:
            return self.aliases[expr]
        return Printer(self.names)(expr)

    def load(self, buf: Buffer, offset: Expr, mask: str | None) -> str:
        self.load_offsets.append((buf, offset))
        ptr = self.pointer(buf)
        where = self.index(offset)
        if sympy.sympify(offset).is_Integer:
            mask = None  # one element at a fixed, valid offset: a scalar load needs no mask
        code = f"tl.load({ptr} + {where}" + (f", mask={mask}, other=0)" if mask else ")")
        raw = self.var(code, buf.dtype)
        want = compute_dtype(buf.dtype)
        value = raw if want == buf.dtype else self.var(f"{raw}.to({TL_TYPES[want]})", want)
        self.loads[value] = (raw, mask, buf.dtype)
        return value

    def store(self, buf: Buffer, offset: Expr, value: str, mask: str | None) -> None:
        ptr = self.pointer(buf)
        value = self.cast(value, buf.dtype)
        self.line(f"tl.store({ptr} + {self.index(offset)}, {value}" + (f", mask={mask})" if mask else ")"))

    def cast(self, var: str, dtype: str) -> str:
        have = self.dtype(var)
        if have == dtype:
            return var
        if dtype == "bool":
            return self.var(f"{var} != 0", "bool")
        return self.var(f"{var}.to({TL_TYPES[dtype]})", dtype)

    def opaque(self, var: str) -> sympy.Symbol:
        """An index value computed at run time, usable inside index expressions."""
        sym = opaque_symbol(f"_o_{var}")
        self.names[sym] = var
        return sym

    def constexpr(self, name: str) -> str:
        if not any(p.name == name for p in self.params):
            self.params.append(Param(name, "constexpr"))
        return name

    def source(self, helpers: dict[str, str]) -> str:
        # Run-time arguments first (the launch passes them by position), then the constexprs.
        ordered = [p for p in self.params if p.kind != "constexpr"] + [p for p in self.params if p.kind == "constexpr"]
        args = ", ".join(f"{p.name}: tl.constexpr" if p.kind == "constexpr" else p.name for p in ordered)
        head = f"@triton.jit\ndef {self.name}({args}):\n"
        return head + "\n".join(self.lines) + "\n"


def and_masks(*masks: str | None) -> str | None:
    parts = [m for m in masks if m]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"
