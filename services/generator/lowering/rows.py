"""Row programs: reductions, and the pointwise work that reads them, in one kernel.

A reduction (sum, prod, amax, amin, var) is a lazy :class:`ReductionValue`. When a stored
value reads reductions over its own trailing elements (a softmax reads a row's max and the
sum of its exponentials; a layer norm reads a row's mean and variance), one kernel computes
them and the value together: each program takes a block of rows, computes the reductions
over each row, then the value over the row's elements. A row that fits a block
(``PERSISTENT_MAX`` elements) is loaded once and kept in registers for every step; a longer
row is walked in chunks, once per reduction and once more for the value (a max and the sum
of exponentials shifted by it share one walk: the online softmax).

A reduction read any other way (over other dims, or by a kernel that is no row program) is
computed by a kernel of its own and read back from memory.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from services.generator.lowering import tunables, welford
from services.generator.lowering.indexing import Expr, bounds, fold, linear, numel, range_symbol
from services.generator.lowering.ir import FLOATS, Buffer, KernelWriter, Stored, Value, compute_dtype
from services.generator.lowering.kernels import (COLUMN_RUN, Kernel, LaunchShape, column_launch, kernel_args,
                                                 out_symbols, pow2, run_after, tl_type, walks_columns)

# A row of up to ``tunables.current().whole_row_max`` elements is kept in registers.


def _lowest(dtype: str) -> str:
    if dtype in FLOATS:
        return 'float("-inf")'
    return {"int8": "-128", "int16": "-32768", "int32": "-2147483648", "int64": "-9223372036854775808",
            "uint8": "0", "bool": "0"}[dtype]


def _highest(dtype: str) -> str:
    if dtype in FLOATS:
        return 'float("inf")'
    return {"int8": "127", "int16": "32767", "int32": "2147483647", "int64": "9223372036854775807",
            "uint8": "255", "bool": "1"}[dtype]


class ReductionValue(Value):
    """``kind`` over ``dims`` of ``src``; computed where a row program reads it, else by a
    kernel of its own (``realize``)."""

    def __init__(self, builder: Any, src: Value, dims: Sequence[int], kind: str, shape: Sequence[int],
                 dtype: str, correction: float = 0.0) -> None:
        self.builder = builder
        self.src = src
        self.dims = sorted(dims)
        self.kind = kind
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.correction = correction
        self.cost = 0
        self.kept = [s for d, s in enumerate(src.shape) if d not in self.dims]
        self.reduced = [s for d, s in enumerate(src.shape) if d in self.dims]
        self.acc = "int32" if dtype == "bool" else compute_dtype(dtype)
        if kind == "sum" and dtype == "int64" and getattr(src, "from_bool", None) is not None \
                and numel(self.reduced) < 2**31:
            # A count of booleans (``any``, ``all`` and ``count_nonzero`` decompose to one):
            # exact in 32 bits, and half an int64's work on inputs of one byte an element.
            self.acc = "int32"
        self._stored: Stored | None = None
        # The row program that computes this reduction for the value it stores, and the
        # buffer it stores the reduction in when asked (``row_kernel``'s epilogue).
        self._fused: tuple[Kernel, Buffer] | None = None

    @property
    def count(self) -> int:
        return numel(self.reduced)

    @property
    def splits(self) -> int:
        """Slices each row is cut into (split_count); 1 for reductions that cannot combine."""
        return split_count(numel(self.kept), self.count, self.run) if self.kind in _SPLITTABLE else 1

    @functools.cached_property
    def _largest_read(self) -> tuple[Buffer, Expr] | None:
        return largest_read(self.src)

    @functools.cached_property
    def run(self) -> int:
        """Kept elements in a row in memory where this reduction reads (``memory_run``)."""
        return memory_run(self.src, self.dims, self._largest_read)

    @property
    def width(self) -> int:
        """Bytes of an element of the largest buffer this reduction reads (4 where none)."""
        read = self._largest_read
        return ELEMENT_BYTES.get(read[0].dtype, 4) if read is not None else 4

    def row_index(self, index: Sequence[Expr]) -> list[Expr] | None:
        """The kept dims' part of an index into this reduction: a reduction that keeps its
        reduced dims (``max(dim, keepdim=True)``) is read at 0 in each; None when it is not."""
        if len(self.shape) != len(self.src.shape) or len(self.shape) == len(self.kept):
            return list(index)
        if any(bounds(sympy.sympify(index[d])) != (0, 0) for d in self.dims):
            return None
        return [i for d, i in enumerate(index) if d not in self.dims]

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        row: RowContext | None = getattr(k, "row", None)
        if row is not None and row.serves(self, index):
            return row.results[id(self)]
        if getattr(k, "probing", False):
            k.pending.append((self, list(index)))  # type: ignore[attr-defined]
            return k.var(f"tl.full([1], 0, {tl_type(self.acc)})", self.acc)
        return self.realize().load(k, index, mask)

    def realize(self) -> Stored:
        if self._stored is None and self._fused is not None:
            kernel, buf = self._fused
            for shape in (kernel.gpu, kernel.cpu):
                shape.meta["STORE_ROWS"] = 1
            self.builder.keep(buf)
            self._stored = Stored(buf)
        if self._stored is None:
            chain = _row_chain(self)
            _compute(self.builder, chain, self.splits)
        assert self._stored is not None
        return self._stored


@dataclass
class RowContext:
    """The rows a row program is walking: the symbols of the kept and the reduced dims, and
    the reductions it has computed so far (their code names, shaped [XBLOCK, 1])."""

    shape: tuple[int, ...]
    dims: list[int]
    xs: list[Expr]
    results: dict[int, str] = field(default_factory=dict)

    def serves(self, r: ReductionValue, index: Sequence[Expr]) -> bool:
        return (id(r) in self.results and tuple(r.src.shape) == self.shape and r.dims == self.dims
                and same_index(r.row_index(index), self.xs))


def same_index(index: Sequence[Any] | None, symbols: Sequence[Expr]) -> bool:
    """Whether ``index`` is ``symbols`` (element by element) wherever the symbols range: a
    dim of size 1 indexed by 0 in one and by its one-valued symbol in the other is the same."""
    if index is None or len(index) != len(symbols):
        return False
    for i, s in zip(index, symbols, strict=True):
        i = fold(sympy.sympify(i))
        if i != s and (difference := sympy.expand(i - s)) != 0 and bounds(difference) != (0, 0):
            return False
    return True


def _merge(rank: int, dims: Sequence[int], xs: Sequence[Expr], rs: Sequence[Expr]) -> list[Expr]:
    xi, ri = iter(xs), iter(rs)
    return [next(ri) if d in dims else next(xi) for d in range(rank)]


def _block_reduce(k: KernelWriter, r: ReductionValue, values: str, mask: str, mean: str | None = None) -> str:
    """One block's reduction along axis 1 of ``values`` (lanes outside ``mask`` ignored)."""
    acc = r.acc
    v = k.cast(values, acc)
    if r.kind in ("sum", "var"):
        if r.kind == "var" and mean is not None:
            v = k.var(f"({v} - {mean}) * ({v} - {mean})", acc)
        return k.var(f"tl.sum(tl.where({mask}, {v}, 0), 1)[:, None]", acc)
    if r.kind == "prod":
        k.helpers.add("_kv_mul")
        return k.var(f"tl.reduce(tl.where({mask}, {v}, 1), 1, _kv_mul)[:, None]", acc)
    big = r.kind == "amax"
    fill = _lowest(acc) if big else _highest(acc)
    fold = "tl.max" if big else "tl.min"
    masked = k.var(f"tl.where({mask}, {v}, {fill})", acc)
    if acc not in FLOATS:
        return k.var(f"{fold}({masked}, 1)[:, None]", acc)
    nan = k.var(f"tl.max(({mask} & ({v} != {v})).to(tl.int32), 1)[:, None]", "int32")
    return k.var(f"tl.where({nan} > 0, float('nan'), {fold}({masked}, 1)[:, None])", acc)


def _combine(k: KernelWriter, r: ReductionValue, a: str, v: str) -> str:
    """Fold block values into a running [XBLOCK, RBLOCK] accumulator (looped rows)."""
    if r.kind in ("sum", "var"):
        return f"{a} + {v}"
    if r.kind == "prod":
        return f"{a} * {v}"
    better = ">" if r.kind == "amax" else "<"
    cond = f"({v} {better} {a})" + (f" | ({v} != {v})" if r.acc in FLOATS else "")
    return f"tl.where({cond}, {v}, {a})"


def _init(r: ReductionValue) -> str:
    if r.kind in ("sum", "var"):
        return "0"
    if r.kind == "prod":
        return "1"
    return _lowest(r.acc) if r.kind == "amax" else _highest(r.acc)


def _finish(k: KernelWriter, r: ReductionValue, total: str) -> str:
    if r.kind != "var":
        return total
    return k.var(f"{total} / {max(0.0, r.count - r.correction)!r}", r.acc)


def row_kernel(name: str, shape: Sequence[int], dims: Sequence[int], reductions: Sequence[ReductionValue],
               out: Buffer, value: Value | None,
               stores: Sequence[tuple[ReductionValue, Buffer]] = (), epilogue: Value | None = None) -> Kernel:
    """Computes ``reductions`` (in dependency order) for each row of ``shape`` over ``dims``,
    then stores ``value`` over the whole of ``shape`` into ``out``, or ``epilogue`` (a value of
    one element per row, ``epilogue_plan``) per row into ``out``, or, with neither, each
    reduction of ``stores`` per row into its buffer (default: the last one into ``out``)."""
    k = KernelWriter(name)
    dims = sorted(dims)
    kept = [s for d, s in enumerate(shape) if d not in dims]
    reduced = [s for d, s in enumerate(shape) if d in dims]
    xn, rn = numel(kept), numel(reduced)
    # Rows whose elements lie apart in memory (a reduced dim before a kept one: a sum over a
    # sequence of [batch, time, features]): neighbouring rows are neighbours in memory, so a
    # program takes many rows and walks their elements in short chunks, each chunk reading
    # whole runs of memory. A row program keeps its whole row (it stores a value from it).
    run = reductions[0].run if value is None and reductions else run_after(shape, dims)
    columns = run if value is None and walks_columns(rn, run) else 0
    persistent = not columns and pow2(rn) <= tunables.current().whole_row_max
    xblock, rblock = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    wide = numel(shape) >= 2**31
    k.line("pid = tl.program_id(0)")
    k.line(f"xlin = pid.to(tl.int64) * {xblock} + tl.arange(0, {xblock})[:, None]" if wide
           else f"xlin = pid * {xblock} + tl.arange(0, {xblock})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, kept, "xlin", "x")
    ctx = RowContext(tuple(shape), dims, xs)
    k.row = ctx  # type: ignore[attr-defined]
    rank = len(shape)
    alias = f"(xlin * {rn} + rlin)" if rn > 1 else "xlin"

    def row_symbols() -> list[Expr]:
        k.line(f"mask = xmask & (rlin < {rn})")
        rs = out_symbols(k, reduced, "rlin", "r")
        k.aliases[sympy.expand(linear([*xs, *rs], [*kept, *reduced]))] = alias
        return rs

    if persistent:
        k.line(f"rlin = tl.arange(0, {rblock})[None, :]")
        rs = row_symbols()
        for r in reductions:
            values = r.src.load(k, _merge(rank, dims, xs, rs), "mask")
            mean = None
            if r.kind == "var":
                total = _block_reduce(k, _sum_like(r), values, "mask")
                mean = k.var(f"{total} / {r.count}", r.acc)
            ctx.results[id(r)] = _finish(k, r, _block_reduce(k, r, values, "mask", mean))
        if value is not None:
            full = _merge(rank, dims, xs, rs)
            k.store(out, linear(full, shape), value.load(k, full, "mask"), "mask")
    else:
        skip = _one_walk(k, ctx, rank, dims, xs, reductions, row_symbols)
        for i, r in enumerate(reductions):
            if id(r) in skip:
                continue
            pair = reductions[i + 1] if i + 1 < len(reductions) else None
            if pair is not None and _online_max_sum(k, ctx, rank, dims, xs, rn, r, pair, row_symbols):
                skip.add(id(pair))
                continue
            passes = 2 if r.kind == "var" else 1
            mean = None
            for p in range(passes):
                acc = k.fresh("acc")
                k.line(f"{acc} = tl.full([{xblock}, {rblock}], {_init(r)}, {tl_type(r.acc)})")
                k.dtypes[acc] = r.acc
                with k.block(f"for roff in range(0, {rn}, {rblock}):"):
                    k.line(f"rlin = roff + tl.arange(0, {rblock})[None, :]")
                    rs = row_symbols()
                    v = k.cast(r.src.load(k, _merge(rank, dims, xs, rs), "mask"), r.acc)
                    if mean is not None:
                        v = k.var(f"({v} - {mean}) * ({v} - {mean})", r.acc)
                    k.line(f"{acc} = tl.where(mask, {_combine(k, r, acc, v)}, {acc})")
                total = _block_total(k, r, acc)
                if r.kind == "var" and p == 0:
                    mean = k.var(f"{total} / {r.count}", r.acc)
                else:
                    ctx.results[id(r)] = _finish(k, r, total)
        if value is not None:
            with k.block(f"for roff in range(0, {rn}, {rblock}):"):
                k.line(f"rlin = roff + tl.arange(0, {rblock})[None, :]")
                rs = row_symbols()
                full = _merge(rank, dims, xs, rs)
                k.store(out, linear(full, shape), value.load(k, full, "mask"), "mask")
    outputs = [out]
    if epilogue is not None:
        kept_xs = iter([x for x, size in zip(xs, kept, strict=True) if size != 1])
        at = [sympy.Integer(0) if size == 1 else next(kept_xs) for size in epilogue.shape]
        k.line(f"tl.store({k.pointer(out)} + xlin, {k.cast(epilogue.load(k, at, 'xmask'), out.dtype)}, mask=xmask)")
        # Each reduction is stored too when something read later needs it (STORE_ROWS, set
        # by ReductionValue.realize): one walk of the rows serves every reader.
        flag = k.constexpr("STORE_ROWS")
        with k.block(f"if {flag}:"):
            _store_per_row(k, ctx, stores)
    elif value is None:
        stores = stores or [(reductions[-1], out)]
        _store_per_row(k, ctx, stores)
        outputs = [buf for _, buf in stores]
    # Whole rows of bytes apart in memory, neighbouring rows next to each other in runs of
    # COLUMN_RUN or more (a program reads runs of memory), take four times the rows of wider
    # elements: see _launch.
    apart = value is None and reductions and persistent and run >= COLUMN_RUN
    width = reductions[0].width if apart else 4
    kernel = Kernel(k, kernel_args(k), *_launch(xn, rn, persistent, columns, width), outputs=outputs)
    if epilogue is not None:
        for shape in (kernel.gpu, kernel.cpu):
            shape.meta["STORE_ROWS"] = 0
        for r, buf in stores:
            r._fused = (kernel, buf)
    return kernel


def _store_per_row(k: KernelWriter, ctx: RowContext, stores: Sequence[tuple[ReductionValue, Buffer]]) -> None:
    """Each reduction's result of the program's rows into its buffer, one element per row."""
    for r, buf in stores:
        k.line(f"tl.store({k.pointer(buf)} + xlin, {k.cast(ctx.results[id(r)], buf.dtype)}, mask=xmask)")


def _accumulators(k: KernelWriter, rs: Sequence[ReductionValue], tile: str) -> list[str | welford.Lanes]:
    """A looped accumulator of shape ``tile`` for each of ``rs`` (three for a variance)."""
    accs: list[str | welford.Lanes] = []
    for r in rs:
        if r.kind == "var":
            accs.append(welford.start(k, tile, r.acc, tl_type(r.acc)))
            continue
        acc = k.fresh("acc")
        k.line(f"{acc} = tl.full({tile}, {_init(r)}, {tl_type(r.acc)})")
        k.dtypes[acc] = r.acc
        accs.append(acc)
    return accs


def _accumulate(k: KernelWriter, r: ReductionValue, acc: str | welford.Lanes, value: str) -> None:
    """Fold a block of ``r``'s values into its accumulator where ``mask`` holds (inside a
    ``for roff in range(0, ..., RBLOCK)`` walk)."""
    v = k.cast(value, r.acc)
    if isinstance(acc, welford.Lanes):
        welford.update(k, acc, v, "mask", "roff // RBLOCK")
    else:
        k.line(f"{acc} = tl.where(mask, {_combine(k, r, acc, v)}, {acc})")


def _one_walk(k: KernelWriter, ctx: RowContext, rank: int, dims: Sequence[int], xs: Sequence[Expr],
              reductions: Sequence[ReductionValue], row_symbols: Callable[[], list[Expr]]) -> set[int]:
    """Walks a long row once for every reduction no other one reads and that reads none
    (a norm's variance and mean, a loss's sum and count), a variance by ``welford``; returns
    the ids of those it computed. A single reduction other than a variance keeps its own
    walk (nothing to share); a max read by its row's sum of exponentials keeps the online
    softmax."""
    syms = [range_symbol(f"q{d}", s) for d, s in enumerate(ctx.shape)]
    deps = {id(r): [dep for dep, _ in _probe(r.src, ctx.shape, syms) if dep in reductions] for r in reductions}
    read = {id(dep) for found in deps.values() for dep in found}
    shared = [r for r in reductions if not deps[id(r)] and id(r) not in read]
    if not shared or (len(shared) == 1 and shared[0].kind != "var"):
        return set()
    accs = _accumulators(k, shared, "[XBLOCK, RBLOCK]")
    rn = numel([s for d, s in enumerate(ctx.shape) if d in dims])
    with k.block(f"for roff in range(0, {rn}, RBLOCK):"):
        k.line("rlin = roff + tl.arange(0, RBLOCK)[None, :]")
        rs = row_symbols()
        for r, acc in zip(shared, accs, strict=True):
            _accumulate(k, r, acc, r.src.load(k, _merge(rank, dims, xs, rs), "mask"))
    for r, acc in zip(shared, accs, strict=True):
        total = welford.merge_lanes(k, acc).q if isinstance(acc, welford.Lanes) else _block_total(k, r, acc)
        ctx.results[id(r)] = _finish(k, r, total)
    return {id(r) for r in shared}


_DEF = re.compile(r"^\s*(\w+) = (.*)$")


def _online_max_sum(k: KernelWriter, ctx: RowContext, rank: int, dims: Sequence[int], xs: Sequence[Expr],
                    rn: int, top: ReductionValue, total: ReductionValue, row_symbols: Any) -> bool:
    """A row's max and the sum of ``exp(x - max)`` in one walk over the row (the online
    softmax): each lane keeps its running max and its sum scaled to it, rescaled when the max
    grows, and the lanes are brought to the row's max at the end. Saves one read of the row
    for softmax, log-softmax, logsumexp and cross entropy over long rows.

    Applies when ``total`` sums exactly ``exp(v - top)`` with ``v`` the value ``top`` maxes
    (so every term stays at most 1); the loop is written, its code checked for that shape,
    and taken back otherwise (returns False)."""
    if top.kind != "amax" or total.kind != "sum" or top.acc not in FLOATS or total.acc not in FLOATS:
        return False
    mark, k_state = len(k.lines), (dict(k.dtypes), dict(k.aliases))
    m_acc, s_acc, m_new = k.fresh("macc"), k.fresh("sacc"), k.fresh("mrun")
    xblock, rblock = "XBLOCK", "RBLOCK"
    # "rows": one running max per row ([XBLOCK, 1]), raised by each chunk's max across the
    # row, so a chunk rescales the lanes' sums by one exponential per row, not per element.
    per_row = tunables.current().online_max == "rows"
    k.line(f"{m_acc} = tl.full([{xblock}, {1 if per_row else rblock}], {_init(top)}, {tl_type(top.acc)})")
    k.line(f"{s_acc} = tl.full([{xblock}, {rblock}], 0, {tl_type(total.acc)})")
    k.dtypes.update({m_acc: top.acc, s_acc: total.acc, m_new: top.acc})
    with k.block(f"for roff in range(0, {rn}, {rblock}):"):
        k.line(f"rlin = roff + tl.arange(0, {rblock})[None, :]")
        rs = row_symbols()
        index = _merge(rank, dims, xs, rs)
        raw = top.src.load(k, index, "mask")
        v = k.cast(raw, top.acc)
        if per_row:
            chunk = _block_reduce(k, top, v, "mask")
            k.line(f"{m_new} = {_combine(k, top, m_acc, chunk)}")
        else:
            k.line(f"{m_new} = tl.where(mask, {_combine(k, top, m_acc, v)}, {m_acc})")
        ctx.results[id(top)] = m_new  # the sum's terms read the lane's running max
        body = len(k.lines)
        term = k.cast(total.src.load(k, index, "mask"), total.acc)
        if not _is_shifted_exp(k.lines[body:], term, m_new, {raw, v}):
            del ctx.results[id(top)]
            del k.lines[mark:]
            k.dtypes, k.aliases = k_state[0], k_state[1]
            return False
        scale = k.var(f"tl.where({m_acc} == {m_new}, 1.0, tl.exp({m_acc} - {m_new}))", total.acc)
        term = k.var(f"tl.where({m_new} == float('-inf'), 0.0, {term})", total.acc)
        if per_row:
            # Every lane is brought to the row's new max, those past the row's end too.
            k.line(f"{s_acc} = {s_acc} * {scale} + tl.where(mask, {term}, 0.0)")
        else:
            k.line(f"{s_acc} = tl.where(mask, {s_acc} * {scale} + {term}, {s_acc})")
        k.line(f"{m_acc} = {m_new}")
    if per_row:
        # Every lane's sum is already scaled to the row's max.
        ctx.results[id(top)] = _finish(k, top, m_acc)
        lanes = s_acc
    else:
        row_max = _block_total(k, top, m_acc)
        ctx.results[id(top)] = _finish(k, top, row_max)
        lanes = k.var(f"tl.where({m_acc} == float('-inf'), 0.0, {s_acc} * tl.exp({m_acc} - {row_max}))", total.acc)
    ctx.results[id(total)] = _finish(k, total, k.var(f"tl.sum(tl.where(xmask, {lanes}, 0), 1)[:, None]", total.acc))
    return True


def _is_shifted_exp(lines: Sequence[str], term: str, shift: str, values: set[str]) -> bool:
    """Whether ``term`` was computed as ``exp(v - shift)`` (through casts) with ``v`` one of
    ``values``, and ``shift`` used nowhere else in ``lines``."""
    defs = {m.group(1): m.group(2) for line in lines if (m := _DEF.match(line))}
    name = term
    while name in defs and re.fullmatch(r"\w+\.to\(tl\.float\d+\)", defs[name]):
        name = defs[name].split(".", 1)[0]
    exp = re.fullmatch(r"tl\.exp\((\w+)\)", defs.get(name, ""))
    if exp is None:
        return False
    diff = re.fullmatch(rf"\((\w+) - {shift}\)", defs.get(exp.group(1), ""))
    if diff is None or diff.group(1) not in values:
        return False
    return sum(shift in line for line in lines) == 1


# Reductions whose partial results combine by the same reduction.
_SPLITTABLE = ("sum", "prod", "amax", "amin", "var")
# A slice is a whole number of the largest row block (GPU 2048, interpreter 8192 elements),
# so one slice length serves both launch shapes.
_SLICE_UNIT = 8192
# Rows this few leave a GPU's multiprocessors (132 on an H100) with one or two programs each,
# too few loads in flight to stream a long row at the memory's speed (an instance norm of 128
# rows of 262144 ran at 0.40x torch.compile unsplit); rows this long are worth a second kernel.
_SPLIT_ROWS_BELOW, _SPLIT_LENGTH_FROM = 256, 65536
# Programs a split reduction aims at: several waves of the GPU, so the last, partial one is a
# small part of the run. At 1024 a mean over 33.5M elements ran 1.29 waves on an H200 (six
# 8-warp programs per SM): 59% of the memory's bandwidth against Inductor's 75% (ncu,
# 2026-11-28); slices of 8192 elements (the slice unit) make up to 4096.
_SPLIT_PROGRAMS = 4096


def _slice_length(rn: int, slices: int) -> int:
    """Elements per slice when a row of ``rn`` is cut in ``slices``: whole slice units."""
    return math.ceil(math.ceil(rn / slices) / _SLICE_UNIT) * _SLICE_UNIT


def split_count(xn: int, rn: int, run: int = 1) -> int:
    """Slices per row for a reduction of ``xn`` rows of ``rn`` elements (1: no split); rows
    apart in memory (``run`` neighbouring columns, see column_launch) cut into power-of-two
    slices of at least 512 elements until about 1024 programs run."""
    if walks_columns(rn, run):
        programs = column_launch(xn, rn, run, sliced=True)[0].grid[0]
        want = min(math.ceil(_SPLIT_PROGRAMS / programs), rn // _COLUMN_SLICE)
        return math.ceil(rn / _slice(rn, want, run)) if want > 1 else 1
    if xn >= _SPLIT_ROWS_BELOW or rn < _SPLIT_LENGTH_FROM:
        return 1
    want = max(1, min(math.ceil(rn / _SLICE_UNIT), _SPLIT_PROGRAMS // xn))
    return math.ceil(rn / _slice_length(rn, want))


_COLUMN_SLICE = 512


def _slice(rn: int, slices: int, run: int) -> int:
    """Elements per slice: whole slice units for rows, a power of two for columns (every
    column launch's chunk divides it)."""
    return pow2(math.ceil(rn / slices)) if walks_columns(rn, run) else _slice_length(rn, slices)


def split_kernel(name: str, rs: Sequence[ReductionValue], partials: Sequence[Sequence[Buffer]], splits: int) -> Kernel:
    """Program (row, slice) reduces one slice of one row of each ``r.src`` (one shape, one set
    of dims) into its ``partials[row, slice]`` (a variance: the slice's count, mean and
    squared deviations, ``welford``): one walk over the slice for all of them."""
    r0 = rs[0]
    shape, dims = tuple(r0.src.shape), r0.dims
    kept = [s for d, s in enumerate(shape) if d not in dims]
    reduced = [s for d, s in enumerate(shape) if d in dims]
    xn, rn = numel(kept), numel(reduced)
    run = r0.run
    chunk = _slice(rn, splits, run)
    k = KernelWriter(name)
    xblock, rblock = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    wide = numel(shape) >= 2**31
    k.line("pid = tl.program_id(0)")
    k.line("sid = tl.program_id(1).to(tl.int64)" if wide else "sid = tl.program_id(1)")
    k.line(f"xlin = pid * {xblock} + tl.arange(0, {xblock})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, kept, "xlin", "x")
    accs = _accumulators(k, rs, f"[{xblock}, {rblock}]")
    with k.block(f"for roff in range(0, {chunk}, {rblock}):"):
        k.line(f"rlin = sid * {chunk} + roff + tl.arange(0, {rblock})[None, :]")
        k.line(f"mask = xmask & (rlin < {rn})")
        rs_syms = out_symbols(k, reduced, "rlin", "r")
        k.aliases[sympy.expand(linear([*xs, *rs_syms], [*kept, *reduced]))] = f"(xlin * {rn} + rlin)"
        for r, acc in zip(rs, accs, strict=True):
            _accumulate(k, r, acc, r.src.load(k, _merge(len(shape), dims, xs, rs_syms), "mask"))
    for r, acc, bufs in zip(rs, accs, partials, strict=True):
        totals = list(vars(welford.merge_lanes(k, acc)).values()) if isinstance(acc, welford.Lanes) \
            else [_block_total(k, r, acc)]
        for total, partial in zip(totals, bufs, strict=True):
            k.line(f"tl.store({k.pointer(partial)} + xlin * {splits} + sid, {total}, mask=xmask)")
    outputs = [b for bufs in partials for b in bufs]
    if walks_columns(rn, run):
        gpu, cpu = column_launch(xn, chunk, run, sliced=True)
        return Kernel(k, kernel_args(k), LaunchShape((gpu.grid[0], splits), gpu.meta, gpu.num_warps),
                      LaunchShape((cpu.grid[0], splits), cpu.meta, 1), outputs=outputs)
    return Kernel(k, kernel_args(k), LaunchShape((xn, splits), {"XBLOCK": 1, "RBLOCK": 2048}, 8),
                  LaunchShape((xn, splits), {"XBLOCK": 1, "RBLOCK": _SLICE_UNIT}, 1), outputs=outputs)


def combine_kernel(name: str, rs: Sequence[ReductionValue], partials: Sequence[Sequence[Buffer]],
                   outs: Sequence[Buffer], splits: int) -> Kernel:
    """Program per block of rows: each row's result from its slices' partial results (all of
    a row's slices in one block: ``split_count`` keeps them to at most about 1024)."""
    xn = numel(rs[0].kept)
    k = KernelWriter(name)
    xblock, rblock = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    k.line("pid = tl.program_id(0)")
    k.line(f"xlin = pid * {xblock} + tl.arange(0, {xblock})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    k.line(f"rlin = tl.arange(0, {rblock})[None, :]")
    k.line(f"mask = xmask & (rlin < {splits})")
    for r, bufs, out in zip(rs, partials, outs, strict=True):
        parts = [k.var(f"tl.load({k.pointer(b)} + xlin * {splits} + rlin, mask=mask, other=0)", r.acc) for b in bufs]
        if r.kind == "var":
            result = _finish(k, r, welford.merge_slices(k, *parts, "mask", r.count))
        else:
            result = _block_reduce(k, r, parts[0], "mask")
        k.line(f"tl.store({k.pointer(out)} + xlin, {k.cast(result, out.dtype)}, mask=xmask)")
    return Kernel(k, kernel_args(k), *_launch(xn, splits, True), outputs=list(outs))


def reads(value: Value) -> list[tuple[ReductionValue, list[Expr]]]:
    """The reductions a stored ``value`` reads, with the index it reads each at (its own
    symbols, ``probe_symbols``)."""
    return _probe(value, tuple(value.shape), probe_symbols(value.shape))


def realize_together(builder: Any, reductions: Sequence[ReductionValue]) -> None:
    """Computes, one kernel per group, the reductions not computed yet that reduce the same
    dims of values of one shape: a loss's weighted sum and its count, a norm's numerator and
    denominator. Each would otherwise walk the rows (and read the inputs the values share)
    on its own. A group whose members would split their rows differently, or where one
    member's value reads another member, is left to compute one by one."""
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[ReductionValue]] = {}
    for r in reductions:
        group = groups.setdefault((tuple(r.src.shape), tuple(r.dims)), [])
        if r._stored is None and r not in group:
            group.append(r)
    for (shape, _dims), group in groups.items():
        if len(group) < 2:
            continue
        splits = {r.splits for r in group}
        if len(splits) != 1:
            continue
        if any(dep in group for r in group for dep, _ in _probe(r.src, shape, probe_symbols(shape))):
            continue  # one reads another: computed in dependency order one by one
        _compute(builder, group, splits.pop())


def _compute(builder: Any, group: Sequence[ReductionValue], splits: int) -> None:
    """Emits the kernels computing ``group`` (reductions of the same dims of values of one
    shape: none reading another, or, unsplit, each after those it reads) and stores each
    result in a buffer of its own."""
    chain_inputs(builder, group)
    first = group[0]
    name = builder.kernel_name("_".join(sorted({r.kind for r in group})))
    outs = [builder.new_buffer(r.shape, r.dtype, r.kind) for r in group]
    if splits > 1:
        # Few long rows: many programs reduce slices of every row (one program per row would
        # leave the GPU idle), a second kernel combines their partial results.
        kept = numel(first.kept)
        partials = [[builder.new_buffer((kept, splits), r.acc, f"{r.kind}_part")
                     for _ in range(3 if r.kind == "var" else 1)] for r in group]
        builder.emit(split_kernel(name + "_split", group, partials, splits))
        builder.emit(combine_kernel(name, group, partials, outs, splits))
    else:
        builder.emit(row_kernel(name, first.src.shape, first.dims, list(group), outs[0], None,
                                list(zip(group, outs, strict=True))))
    for r, out in zip(group, outs, strict=True):
        r._stored = Stored(out)


def _row_chain(r: ReductionValue) -> list[ReductionValue]:
    """``r`` and the reductions of the same rows it reads that are not stored yet, each after
    what it reads: a log-softmax's sum of exponentials and the max it is shifted by. Computed
    by one row program, a row is read once (in registers, or by the online softmax) where
    a kernel for each read it once per reduction. Rows split across programs are not chained."""
    if r.splits > 1:
        return [r]
    chain = [dep for dep in _order([r], tuple(r.src.shape), list(r.dims)) if dep is r or dep._stored is None]
    return chain if all(dep.splits == 1 for dep in chain) else [r]


def chain_inputs(builder: Any, group: Sequence[ReductionValue]) -> None:
    """Computes first the reductions ``group``'s values read that read one another over the
    same rows (a log-softmax's max and sum of exponentials, which a loss then sums over all
    elements), one row program per such chain. Realized as the group's kernel reads them,
    each would be a kernel of its own: four walks of two tensors for a KL divergence of two
    log-softmaxes, where two do."""
    found: dict[tuple[tuple[int, ...], tuple[int, ...]], list[ReductionValue]] = {}
    for r in group:
        for dep, _ in _probe(r.src, tuple(r.src.shape), probe_symbols(r.src.shape)):
            deps = found.setdefault((tuple(dep.src.shape), tuple(dep.dims)), [])
            if dep._stored is None and dep not in group and dep not in deps:
                deps.append(dep)
    for (shape, dims), deps in found.items():
        chain = [d for d in _order(deps, shape, list(dims)) if d._stored is None]
        syms = probe_symbols(shape)
        linked = any(dep in chain for d in chain for dep, _ in _probe(d.src, shape, syms))
        if linked and len(chain) > 1 and all(d.splits == 1 for d in chain):
            _compute(builder, chain, 1)


def _sum_like(r: ReductionValue) -> ReductionValue:
    twin = ReductionValue.__new__(ReductionValue)
    twin.__dict__.update(r.__dict__)
    twin.kind = "sum"
    return twin


def _block_total(k: KernelWriter, r: ReductionValue, acc: str) -> str:
    """The row totals of a looped accumulator [XBLOCK, RBLOCK] (its lanes all valid)."""
    return _block_reduce(k, r if r.kind != "var" else _sum_like(r), acc, "xmask")


def _launch(xn: int, rn: int, persistent: bool, columns: int = 0,
            width: int = 4) -> tuple[LaunchShape, LaunchShape]:
    """Launch shapes of a row program: a column walk, whole rows (``width``: bytes of the
    elements read where rows lie apart in memory, else 4) or one row walked per program."""
    if columns:
        return column_launch(xn, rn, columns)
    if persistent:
        r = pow2(rn)
        # 4096 elements a program; 16384 of one-byte elements where whole rows lie apart in
        # memory: on an H200 (2026-11-28, tools/launch_sweep.py) an ``all`` over 16 rows of
        # 262144 booleans ran 1.65x faster at 1024 rows a program than at 256, an ``any``
        # over 128 rows 1.41x faster at 128 than at 32, each time by steady steps; a
        # bfloat16 sum over 64 rows ran best at 4096 elements (8192: 0.87x).
        gx = max(1, min(pow2(xn), (16384 if width == 1 else 4096) // r))
        cx = max(1, min(pow2(xn), 65536 // r))
        # Rows of 4096 on four warps (16 before): on an H200 (2026-11-28, tools/launch_sweep.py)
        # four beat 16 on two of three reductions over rows of 4096 (by 1.2x and 1.6x) and tied
        # on the third. Rows of 8192 keep 16: the sweep preferred eight on single reductions,
        # but eight and four both lost to 16 on softmax and norm rows in an A/B of the corpus.
        warps = 16 if r >= 8192 else 4 if r >= 4096 or r < 1024 else 8
        return (LaunchShape((math.ceil(xn / gx),), {"XBLOCK": gx, "RBLOCK": r}, warps),
                LaunchShape((math.ceil(xn / cx),), {"XBLOCK": cx, "RBLOCK": r}, 1))
    gr, cr = 2048, 8192
    gx = 1
    cx = max(1, min(pow2(xn), 65536 // cr))
    return (LaunchShape((xn,), {"XBLOCK": gx, "RBLOCK": gr}, 8),
            LaunchShape((math.ceil(xn / cx),), {"XBLOCK": cx, "RBLOCK": cr}, 1))


def plan(builder: Any, value: Value,
         found: Sequence[tuple[ReductionValue, list[Expr]]]) -> tuple[list[int], list[ReductionValue]] | None:
    """The reductions a stored ``value`` can compute in its own kernel, in the order they
    must be computed, and the dims they reduce; None when it reads none that way. ``found``:
    what it reads (``reads(value)``)."""
    shape = tuple(value.shape)
    syms = probe_symbols(shape)
    groups: dict[tuple[int, ...], list[ReductionValue]] = {}
    for r, index in found:
        kept_syms = [syms[d] for d in range(len(shape)) if d not in r.dims]
        if tuple(r.src.shape) == shape and same_index(r.row_index(index), kept_syms):
            groups.setdefault(tuple(r.dims), [])
            if r not in groups[tuple(r.dims)]:
                groups[tuple(r.dims)].append(r)
    if not groups:
        return None
    dims, roots = max(groups.items(), key=lambda item: len(item[1]))
    kept = numel([s for d, s in enumerate(shape) if d not in dims])
    if split_count(kept, numel(shape) // max(kept, 1), roots[0].run) > 1 \
            and all(r.kind in _SPLITTABLE for r in roots):
        return None  # few long rows: the reductions are split across programs, each its own kernel
    return list(dims), _order(roots, shape, list(dims))


def epilogue_plan(value: Value, found: Sequence[tuple[ReductionValue, list[Expr]]]
                  ) -> tuple[list[int], list[ReductionValue]] | None:
    """The reductions a stored ``value`` of one element per row can compute in its own
    kernel (a max times two, a sum's square root, a pool's window maximum returned as a
    view), in dependency order, and the dims they reduce; None when it reads none that way.

    The value must read each of them at its own element (its shape is the rows' shape, up to
    dims of size 1), and the rows must not be split across programs. Each row program then
    computes the reductions and stores the value: a kernel, and a write and read of each
    reduction's result, fewer than computing the reductions first."""
    shape = tuple(value.shape)
    syms = probe_symbols(shape)
    mine = [sym for sym, size in zip(syms, shape, strict=True) if size != 1]
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[ReductionValue]] = {}
    rejected: set[int] = set()
    for r, index in found:
        if r._stored is not None or r._fused is not None:
            continue   # computed already (stored, or storable by the row program that did)
        kept = iter(mine)
        if [size for size in r.kept if size != 1] != [size for size in shape if size != 1] or r.splits > 1:
            rejected.add(id(r))
            continue
        want = [sympy.Integer(0) if size == 1 else next(kept) for size in r.kept]
        if not same_index(r.row_index(index), want):
            rejected.add(id(r))   # read at another row too: it needs storing anyway
            continue
        group = groups.setdefault((tuple(r.src.shape), tuple(r.dims)), [])
        if r not in group:
            group.append(r)
    groups = {key: [r for r in rs if id(r) not in rejected] for key, rs in groups.items()}
    groups = {key: rs for key, rs in groups.items() if rs}
    if not groups:
        return None
    (src_shape, dims), roots = max(groups.items(), key=lambda item: len(item[1]))
    chain = [r for r in _order(roots, src_shape, list(dims)) if r._stored is None]
    if any(r.splits > 1 for r in chain):
        return None
    return list(dims), chain


def _probe_writer(syms: Sequence[Expr]) -> KernelWriter:
    k = KernelWriter("probe")
    k.probing = True  # type: ignore[attr-defined]
    k.pending = []  # type: ignore[attr-defined]
    k.pending_products = []  # type: ignore[attr-defined]
    for d, sym in enumerate(syms):
        if isinstance(sym, sympy.Symbol):
            k.names[sym] = f"p{d}"
    return k


def _probed(value: Value, syms: Sequence[Expr]) -> KernelWriter:
    """A throwaway kernel ``value``'s code was written into, read at ``syms``: what it read
    (``load_offsets``), the reductions and products it reads (``pending``...)."""
    k = _probe_writer(syms)
    value.load(k, list(syms), None)
    return k


def _probe(value: Value, shape: Sequence[int], syms: Sequence[Expr]) -> list[tuple[ReductionValue, list[Expr]]]:
    """The reductions ``value`` reads (with the index it reads each at), found by writing its
    code into a throwaway kernel."""
    return list(_probed(value, syms).pending)  # type: ignore[attr-defined]


_PROBE_SYMBOLS: dict[tuple[int, ...], list[Expr]] = {}


def probe_symbols(shape: Sequence[int]) -> list[Expr]:
    """The index symbols ``probe_products`` reads a value of ``shape`` at."""
    key = tuple(int(s) for s in shape)
    if key not in _PROBE_SYMBOLS:
        _PROBE_SYMBOLS[key] = [range_symbol(f"e{d}", s) for d, s in enumerate(key)]
    return _PROBE_SYMBOLS[key]


def memory_run(src: Value, dims: Sequence[int], read: tuple[Buffer, Expr] | None) -> int:
    """Kept elements in a row in memory where a reduction of ``src`` over ``dims`` reads its
    largest input: 1 where that input's reduced elements are contiguous, the length of its
    contiguous kept dim where the kept elements are (a column walk), else ``run_after`` of
    the logical shape. The logical order misleads where the input is read through a
    transpose: ``torch.mv(W.t(), x)`` sums each column of W, whose logical rows are W's
    columns (a whole-row walk of them measured 7x slower than eager). ``read``: the largest
    read, ``largest_read(src)``."""
    shape = tuple(src.shape)
    logical = run_after(shape, dims)
    syms = probe_symbols(shape)
    if read is None:
        return logical
    _, offset = read
    strides: dict[int, int] = {}
    for d, sym in enumerate(syms):
        if not isinstance(sym, sympy.Symbol):
            continue
        slope = sympy.diff(sympy.sympify(offset), sym)
        if not slope.is_Integer:
            return logical  # read through a reshape (floor/mod): leave it to the logical order
        strides[d] = int(slope)
    if any(strides.get(d) == 1 for d in dims):
        return 1
    unit = [d for d, stride in strides.items() if stride == 1 and d not in dims]
    return shape[unit[0]] if unit else logical


def largest_read(src: Value) -> tuple[Buffer, Expr] | None:
    """The largest buffer ``src`` reads and the offset it reads at, in ``src``'s probe
    symbols; None where it reads none (or cannot be probed)."""
    try:
        k = _probed(src, probe_symbols(src.shape))
    except Exception:  # noqa: BLE001 - a value that cannot be probed is read as its logical shape
        return None
    return max(k.load_offsets, key=lambda read: read[0].numel) if k.load_offsets else None


# Bytes of an element of each buffer type (the rest: 4).
ELEMENT_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "float16": 2, "bfloat16": 2, "int16": 2,
                 "float64": 8, "int64": 8}


def probe_products(value: Value) -> list[tuple[Any, list[Expr]]]:
    """The matrix products (not yet computed) ``value`` reads, with the index it reads each at."""
    return list(_probed(value, probe_symbols(value.shape)).pending_products)  # type: ignore[attr-defined]


def _order(roots: Sequence[ReductionValue], shape: tuple[int, ...], dims: list[int]) -> list[ReductionValue]:
    """``roots`` and the same-row reductions they read, each after what it reads."""
    ordered: list[ReductionValue] = []
    syms = [range_symbol(f"q{d}", s) for d, s in enumerate(shape)]
    kept_syms = [syms[d] for d in range(len(shape)) if d not in dims]

    def visit(r: ReductionValue) -> None:
        if r in ordered:
            return
        for dep, index in _probe(r.src, shape, syms):
            if dep.dims == dims and tuple(dep.src.shape) == shape and same_index(dep.row_index(index), kept_syms):
                visit(dep)
        ordered.append(r)

    for r in roots:
        visit(r)
    return ordered
