"""Scans along one dimension: cumsum, cumprod, logcumsumexp, cummax and cummin.

One kernel per scan: a block of rows (every index but the scanned dimension, in flat
order) per program, the scanned dimension walked in chunks. Each chunk is scanned and then
combined with the running result of the chunks before it (the carry, one per row), so the
scanned dimension may be any dimension and any length. The scanned value is read through
its loader: a flip before the scan (a reverse cumsum) or a mask (``torch.where``) costs
nothing extra.

Sums and products scan a chunk with ``tl.cumsum``/``tl.cumprod``. The others (cummax,
cummin, logcumsumexp) scan a chunk on a GPU with Triton's ``associative_scan`` and a combine
function of our own, in log C steps over chunks as long as a sum's. Triton's interpreter (the
CPU pool's runtime) runs such a scan one element at a time in Python, about a millisecond
each, so the interpreter's form scans a short chunk as a triangle instead: position i
reduces the chunk's positions j <= i (a [rows, C, C] block), which is exact (running maxima,
their last index, NaN) and needs only reductions, but does C times a chunk's work (a
running maximum over rows of 8192 ran 0.11x torch.compile on an H200 that way).

Reverse and exclusive scans arrive as flips, pads and subtractions around these operators,
which the views and pointwise lowerings handle. Sorting lives in :mod:`ops_sort`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import sympy

from services.generator.lowering import ops_sort  # noqa: F401 - registers the sorting operators
from services.generator.lowering import tunables
from services.generator.lowering.indexing import Expr, linear, numel
from services.generator.lowering.ir import FLOATS, Buffer, KernelWriter, Stored, Unsupported, Value, compute_dtype
from services.generator.lowering.kernels import (FEW_PROGRAMS, Kernel, LaunchShape, kernel_args, out_symbols,
                                                 pow2, reduction_launch, run_after, spread, tl_type, walks_columns)
from services.generator.lowering.mathlib import HELPERS
from services.generator.lowering.ops_heavy import FusedHost, TileEpilogue
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

# Elementwise combines of a carry (the earlier elements) with a scanned chunk; a generated
# module carries the ones its kernels name, as it carries mathlib's helpers.
HELPERS.update({
    # log(exp(a) + exp(b)) without overflow, as PyTorch's _log_add_exp_helper computes it:
    # equal infinities stay themselves, NaN propagates.
    "_kv_logaddexp": '''
@triton.jit
def _kv_logaddexp(a, b):
    hi = tl.where(a > b, a, b)
    lo = tl.where(a > b, b, a)
    both_inf = (hi == lo) & (tl.abs(hi) == float("inf"))
    r = tl.where(both_inf, hi, hi + _kv_log1p(tl.exp(lo - hi)))
    return tl.where((a != a) | (b != b), a + b, r)
''',
    # (value, index) of the later element when it is NaN or at least the earlier one (the
    # latest maximum wins ties, as PyTorch's cummax); a NaN, once met, stays.
    "_kv_cummax_combine": '''
@triton.jit
def _kv_cummax_combine(va, ia, vb, ib):
    take = (vb != vb) | ((va == va) & (vb >= va))
    return tl.where(take, vb, va), tl.where(take, ib, ia)
''',
    "_kv_cummin_combine": '''
@triton.jit
def _kv_cummin_combine(va, ia, vb, ib):
    take = (vb != vb) | ((va == va) & (vb <= va))
    return tl.where(take, vb, va), tl.where(take, ib, ia)
''',
})

def lowest(dtype: str) -> str:
    """The smallest value of ``dtype``, as a Triton literal (identity of a maximum)."""
    if dtype in FLOATS:
        return 'float("-inf")'
    return {"int8": "-128", "int16": "-32768", "int32": "-2147483648", "int64": "-9223372036854775808",
            "uint8": "0", "bool": "0"}[dtype]


def highest(dtype: str) -> str:
    """The largest value of ``dtype``, as a Triton literal (identity of a minimum)."""
    if dtype in FLOATS:
        return 'float("inf")'
    return {"int8": "127", "int16": "32767", "int32": "2147483647", "int64": "9223372036854775807",
            "uint8": "255", "bool": "1"}[dtype]


ScanOrder = Literal["chunk", "sequential", "tree", "combine"]
# What a fused value computes from a scanned element (kernel, its index, the element's
# variable, a store of the raw result when it is kept): the variable to store in its place.
ScanEpilogue = Callable[[KernelWriter, list[Expr], str, Callable[[Buffer, str], None]], str]

# Chunk lengths of the triangle scans: C*C*rows elements per step.
TRIANGLE_GPU, TRIANGLE_CPU = 32, 64


@dataclass(frozen=True)
class ScanKind:
    """How one scan runs: ``chunk`` scans a chunk (list of variables: the value, and the
    position for cummax/cummin) along axis 1, ``combine`` folds the carry (the earlier
    elements) into it; ``triangle`` scans use short chunks (see the module docstring), and
    on a GPU scan a chunk with ``associative_scan`` and the jitted helper ``helper`` (its
    arguments the earlier element's variables, then the later one's; the helpers the
    helper calls in ``helper_needs``) instead."""

    name: str
    identity: Callable[[str], str]
    chunk: Callable[[KernelWriter, list[str], str, str], list[str]]
    combine: Callable[[KernelWriter, list[str], list[str], str], list[str]]
    with_index: bool = False
    triangle: bool = False
    helper: str = ""
    helper_needs: tuple[str, ...] = ()


def _plain(name: str, primitive: str, op: str, identity: str) -> ScanKind:
    return ScanKind(
        name, lambda dtype: identity,
        lambda k, v, acc, rb: [k.var(f"{primitive}({v[0]}, 1)", acc)],
        lambda k, carry, s, acc: [k.var(f"({carry[0]} {op} {s[0]})", acc)])


def _triangle(k: KernelWriter, rb: str) -> tuple[str, str]:
    """The mask of pairs (i, j <= i) of a chunk, [1, C, C], and the j positions [1, 1, C]."""
    cj = k.var(f"tl.arange(0, {rb})[None, None, :]", "int32")
    tri = k.var(f"({cj} <= tl.arange(0, {rb})[None, :, None])", "bool")
    return tri, cj


def _logcumsumexp_chunk(k: KernelWriter, v: list[str], acc: str, rb: str) -> list[str]:
    """log(sum_{j<=i} exp(x_j)) per position, shifted by the running maximum of each
    position (exact scaling, no overflow); -inf, +inf and NaN as PyTorch gives them."""
    tri, _ = _triangle(k, rb)
    vj = k.var(f"{v[0]}[:, None, :]", acc)
    num = k.var(f"({tri} & ({vj} == {vj}))", "bool")
    top = k.var(f"tl.max(tl.where({num}, {vj}, float(\"-inf\")), 2)", acc)
    shift = k.var(f"tl.where(tl.abs({top}) == float(\"inf\"), 0.0, {top})", acc)
    total = k.var(f"tl.sum(tl.where({num}, tl.exp({vj} - {shift}[:, :, None]), 0.0), 2)", acc)
    nan = k.var(f"tl.max(tl.where({tri} & ({vj} != {vj}), 1, 0), 2) > 0", "bool")
    y = k.var(f"tl.where({top} == float(\"inf\"), {top}, {shift} + tl.log({total}))", acc)
    return [k.var(f"tl.where({nan}, float(\"nan\"), {y})", acc)]


def _logcumsumexp() -> ScanKind:
    def combine(k: KernelWriter, carry: list[str], s: list[str], acc: str) -> list[str]:
        k.helpers.update({"_kv_logaddexp", "_kv_log1p"})
        return [k.var(f"_kv_logaddexp({carry[0]}, {s[0]})", acc)]

    return ScanKind("logcumsumexp", lambda dtype: 'float("-inf")', _logcumsumexp_chunk, combine, triangle=True,
                    helper="_kv_logaddexp", helper_needs=("_kv_log1p",))


def _cumextreme(kind: str) -> ScanKind:
    helper = f"_kv_{kind}_combine"
    fold = "tl.max" if kind == "cummax" else "tl.min"
    identity = lowest if kind == "cummax" else highest

    def chunk(k: KernelWriter, v: list[str], acc: str, rb: str) -> list[str]:
        """The running extreme of each position, the last position holding it (ties go to
        the latest, as PyTorch's >= / <= update), or the last NaN once one was met."""
        tri, cj = _triangle(k, rb)
        vj = k.var(f"{v[0]}[:, None, :]", acc)
        if acc in FLOATS:
            num = k.var(f"({tri} & ({vj} == {vj}))", "bool")
        else:
            num = tri
        best = k.var(f"{fold}(tl.where({num}, {vj}, {identity(acc)}), 2)", acc)
        at = k.var(f"tl.max(tl.where({num} & ({vj} == {best}[:, :, None]), {cj}, -1), 2)", "int32")
        if acc in FLOATS:
            nan_at = k.var(f"tl.max(tl.where({tri} & ({vj} != {vj}), {cj}, -1), 2)", "int32")
            best = k.var(f"tl.where({nan_at} >= 0, float(\"nan\"), {best})", acc)
            at = k.var(f"tl.where({nan_at} >= 0, {nan_at}, {at})", "int32")
        return [best, k.var(f"(roff + {at}).to(tl.int64)", "int64")]

    def combine(k: KernelWriter, carry: list[str], s: list[str], acc: str) -> list[str]:
        k.helpers.add(helper)
        pair = k.fresh("pair")
        k.line(f"{pair}_v, {pair}_i = {helper}({carry[0]}, {carry[1]}, {s[0]}, {s[1]})")
        k.dtypes[f"{pair}_v"], k.dtypes[f"{pair}_i"] = acc, "int64"
        return [f"{pair}_v", f"{pair}_i"]

    return ScanKind(kind, identity, chunk, combine, with_index=True, triangle=True, helper=helper)


def _combine_chunk(k: KernelWriter, kind: ScanKind, v: list[str], acc: str, rb: str) -> list[str]:
    """A chunk ([XBLOCK, RBLOCK]) scanned by ``associative_scan`` with the kind's helper: the
    running value of each position, and for cummax/cummin the position holding it (the
    helper picks the later element on ties and keeps a NaN, so the tree gives the triangle's
    result: the latest index of the extreme, or of the last NaN met)."""
    k.helpers.update({kind.helper, *kind.helper_needs})
    if not kind.with_index:
        return [k.var(f"tl.associative_scan({v[0]}, 1, {kind.helper})", acc)]
    cols = k.var(f"tl.broadcast_to(tl.arange(0, {rb})[None, :], [{k.constexpr('XBLOCK')}, {rb}])", "int32")
    pair = k.fresh("scanned")
    k.line(f"{pair}_v, {pair}_i = tl.associative_scan(({v[0]}, {cols}), 1, {kind.helper})")
    k.dtypes[f"{pair}_v"], k.dtypes[f"{pair}_i"] = acc, "int32"
    return [f"{pair}_v", k.var(f"(roff + {pair}_i).to(tl.int64)", "int64")]


KINDS: dict[str, ScanKind] = {
    "cumsum": _plain("cumsum", "tl.cumsum", "+", "0"),
    "cumprod": _plain("cumprod", "tl.cumprod", "*", "1"),
    "logcumsumexp": _logcumsumexp(),
    "cummax": _cumextreme("cummax"),
    "cummin": _cumextreme("cummin"),
}


def scan_kernel(name: str, src: Value, dim: int, kind: ScanKind, acc: str, outs: list[Buffer],
                order: ScanOrder = "chunk", epilogue: ScanEpilogue | None = None) -> Kernel:
    """``outs[0][..., i, ...] = scan(src[..., :i+1, ...])`` along ``dim`` (and the index of
    the running extreme in ``outs[1]`` for cummax/cummin), computed in type ``acc``.
    ``order``: "chunk" scans each chunk with Triton's own scan; "sequential" adds one element
    after another, and "tree" runs PyTorch's chunked tree, each in ``acc`` with a 16-bit
    ``acc`` rounded after every step: the order and rounding of PyTorch's GPU scan along an
    outer dimension and along the innermost one (see :func:`cumulative`). With ``epilogue``,
    ``outs[0]`` gets what it computes from each scanned element instead (``ScanValue``)."""
    sequential = order == "sequential"
    k = KernelWriter(name)
    shape = list(src.shape)
    n = shape[dim]
    kept = shape[:dim] + shape[dim + 1:]
    xn = numel(kept)
    chunk = cuda_chunk(xn, n) if order == "tree" else 0  # PyTorch's, for the tree's steps and launch
    xb, rb = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    wide = numel(shape) >= 2**31
    k.line("pid = tl.program_id(0)" + (".to(tl.int64)" if wide else ""))
    k.line(f"xlin = pid * {xb} + tl.arange(0, {xb})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, kept, "xlin", "x")
    ident = kind.identity(acc)
    carry = [k.fresh("carry")]
    k.line(f"{carry[0]} = tl.full([{xb}, 1], {ident}, {tl_type(acc)})")
    if kind.with_index:
        carry.append(k.fresh("carry_at"))
        k.line(f"{carry[1]} = tl.zeros([{xb}, 1], tl.int64)")
    if not sequential:  # the sequential walk keeps its carry up to date itself
        last = k.fresh("last")
        k.line(f"{last} = tl.arange(0, {rb})[None, :] == {rb} - 1")
    with k.block(f"for roff in range(0, {n}, {rb}):"):
        k.line(f"rlin = roff + tl.arange(0, {rb})[None, :]")
        k.line(f"mask = xmask & (rlin < {n})")
        r = out_symbols(k, [n], "rlin", "r")[0]
        idx: list[Expr] = [*xs[:dim], r, *xs[dim:]]
        k.aliases[sympy.expand(linear([*xs, r], [*kept, n]))] = f"(xlin * {n} + rlin)"
        v = k.cast(src.load(k, idx, "mask"), acc)
        # Lanes past the row's end hold the identity, so the chunk's last column is the carry.
        values = [k.var(f"tl.where(mask, {v}, {ident})", acc)]
        offset = linear(idx, shape)

        def store(var: str, at: list[Expr] = idx, where: Expr = offset) -> None:
            if epilogue is not None:
                var = epilogue(k, at, var, lambda raw, value: k.store(raw, where, value, "mask"))
            k.store(outs[0], where, var, "mask")

        if sequential:  # the carry is folded in element by element: it ends the chunk up to date
            store(_sequential_chunk(k, kind, carry[0], values[0], acc, rb))
        elif order == "tree":
            scanned = _tree_chunk(k, kind, carry[0], values[0], acc, rb, chunk)
            store(scanned)
            k.line(f"{carry[0]} = tl.sum(tl.where({last}, {scanned}, 0), 1)[:, None]")
        else:
            chunked = (_combine_chunk(k, kind, values, acc, rb) if order == "combine"
                       else kind.chunk(k, values, acc, rb))
            scanned = kind.combine(k, carry, chunked, acc)
            store(scanned[0])
            for out, var in zip(outs[1:], scanned[1:], strict=True):
                k.store(out, offset, var, "mask")
            for c, var in zip(carry, scanned, strict=True):
                # The last column, picked by a sum over one non-zero lane (exact, NaN kept).
                k.line(f"{c} = tl.sum(tl.where({last}, {var}, 0), 1)[:, None]")
    # A scan along a dim before a kept one reads whole runs of neighbouring columns per chunk.
    if sequential:
        launch = _sequential_launch(xn), reduction_launch(xn, n, run_after(shape, [dim]))[1]
    elif order == "tree":
        launch = _tree_launch(xn, chunk), reduction_launch(xn, n, run_after(shape, [dim]))[1]
    elif kind.triangle and order != "combine":
        launch = _triangle_launch(xn, n)
    else:
        launch = _chunk_launch(xn, n, run_after(shape, [dim]))
    return Kernel(k, kernel_args(k), *launch, outputs=list(outs))


def _chunk_launch(xn: int, n: int, run: int) -> tuple[LaunchShape, LaunchShape]:
    """Launch shapes of a chunked scan (Triton's own scan of each chunk): a reduction's, but
    rows along the innermost dim go fewer to a program (down to one) while that leaves
    under 1024 programs, on four warps where 128 programs or more remain. On an H200
    (2026-11-28, docs/measurements) integer cumsums over 512 to 4096 rows ran 1.2-1.9x
    faster than at the reduction's four rows a program on eight warps; the same change
    made argmax and argmin slower (0.71-0.85x), which keep the reduction's launch."""
    gpu, cpu = reduction_launch(xn, n, run)
    if walks_columns(n, run):
        return gpu, cpu
    rows = spread(xn, gpu.meta["XBLOCK"], 1)
    warps = gpu.num_warps if math.ceil(xn / rows) < FEW_PROGRAMS else 4
    return LaunchShape((math.ceil(xn / rows),), {"XBLOCK": rows, "RBLOCK": gpu.meta["RBLOCK"]}, warps), cpu


def _sequential_chunk(k: KernelWriter, kind: ScanKind, carry: str, values: str, acc: str, rb: str) -> str:
    """Fold a loaded chunk ([XBLOCK, RBLOCK]) into ``carry`` one element at a time, in order;
    returns the running values (a variable). The whole chunk is loaded at once, so its loads
    are in flight together (one element a step measured 2.9x slower than the chunked exact
    scan); each element is picked out of it by a sum over one non-zero lane (exact)."""
    cols = k.var(f"tl.arange(0, {rb})[None, :]", "int32")
    running = k.fresh("running")
    k.line(f"{running} = tl.zeros([{k.constexpr('XBLOCK')}, {rb}], {tl_type(acc)})")
    k.dtypes[running] = acc
    with k.block(f"for j in tl.static_range({rb}):"):
        one = k.var(f"tl.sum(tl.where({cols} == j, {values}, 0), 1)[:, None]", acc)
        k.line(f"{carry} = {_step(k, kind, carry, one, acc)}")
        k.line(f"{running} = tl.where({cols} == j, {carry}, {running})")
    return running


def _step(k: KernelWriter, kind: ScanKind, a: str, b: str, acc: str) -> str:
    """One combine of a sum or product as PyTorch's GPU scan computes it in ``acc``: a 16-bit
    type's operator adds (multiplies) in float32 and rounds the result back (c10::Half)."""
    if acc not in ("float16", "bfloat16"):
        return kind.combine(k, [a], [b], acc)[0]
    wide = kind.combine(k, [k.cast(a, "float32")], [k.cast(b, "float32")], "float32")[0]
    return k.cast(wide, acc)


def cuda_chunk(rows: int, n: int) -> int:
    """The chunk PyTorch's GPU scan along the innermost dimension walks a row in: twice its
    threads per row, 2 ** ((9 + log2(row length) - log2(rows)) // 2) with both logs rounded
    up, bounded to 16..512 (ScanUtils.cuh, get_log_num_threads_x_inner_scan), in its
    unsigned arithmetic: where the rows outnumber the row's elements by more than 2 ** 9 the
    difference wraps and the bound gives 512."""
    log_x, log_y = (n - 1).bit_length(), (rows - 1).bit_length()
    wrapped = ((9 + log_x - log_y) % 2**32) // 2
    return 2 << min(max(4, wrapped), 9)


def _tree_chunk(k: KernelWriter, kind: ScanKind, carry: str, values: str, acc: str, rb: str,
                chunk: int) -> str:
    """Scan a chunk ([XBLOCK, RBLOCK], RBLOCK == ``chunk``) as PyTorch's GPU scan along the
    innermost dimension does (tensor_kernel_scan_innermost_dim): the carry joins the chunk's
    first element, then log2(chunk) Sklansky steps, where each element in the upper half of
    a block of 2s adds the last element of the lower half. Every sum is PyTorch's own, so
    the result is PyTorch's to the bit; an exact or differently ordered float32 scan of a
    long row differs from it by PyTorch's rounding (7e-4 over 11024 elements, past 1e-4).
    The lower half's last element is picked with ``tl.gather``."""
    cols = k.var(f"tl.arange(0, {rb})[None, :]", "int32")
    first = _step(k, kind, values, carry, acc)
    v = k.var(f"tl.where({cols} == 0, {first}, {values})", acc)
    s = 1
    while s < chunk:
        upper = k.var(f"({cols} & {s}) != 0", "bool")
        at = k.var(f"tl.broadcast_to(tl.where({upper}, ({cols} & {~(s - 1)}) - 1, {cols}), "
                   f"[{k.constexpr('XBLOCK')}, {rb}])", "int32")
        lower_last = k.var(f"tl.gather({v}, {at}, 1)", acc)
        v = k.var(f"tl.where({upper}, {_step(k, kind, v, lower_last, acc)}, {v})", acc)
        s *= 2
    return v


def _tree_launch(xn: int, chunk: int) -> LaunchShape:
    """A warp per 64 elements of a chunk (up to 8), and rows per program so that about 4096
    programs run (at most 4096 elements a program). Measured on an H200 (2026-11-28, every
    XBLOCK x num_warps from 1 to 64 x 8 on six scans, docs/measurements): a warp per row of
    a 32- or 64-element chunk beat four rows on four warps by 1.3x on 4096 rows of 8192 and of
    2048 elements; 65536 short rows ran best sixteen rows to a warp; 256 rows of 16384 and
    11024 in 256-element chunks took 0.09-0.10 ms on one row of four warps."""
    warps = max(1, min(8, chunk // 64))
    gx = 1
    while gx * 2 <= max(1, xn // 4096) and gx * 2 * chunk <= 4096:
        gx *= 2
    return LaunchShape((math.ceil(xn / gx),), {"XBLOCK": gx, "RBLOCK": chunk}, warps)


# Elements of each column a sequential scan's program loads at once.
SEQUENTIAL_CHUNK = 16


def _sequential_launch(xn: int) -> LaunchShape:
    """A chunk of SEQUENTIAL_CHUNK elements of each of up to 256 neighbouring columns per step
    (at least 32, a 128-byte run of float32, while that leaves under 1024 programs)."""
    gx = spread(xn, max(1, min(pow2(xn), 256)), 32)
    return LaunchShape((math.ceil(xn / gx),), {"XBLOCK": gx, "RBLOCK": SEQUENTIAL_CHUNK},
                       max(1, min(4, gx * SEQUENTIAL_CHUNK // 512)))


def _triangle_launch(xn: int, n: int) -> tuple[LaunchShape, LaunchShape]:
    """Rows per program so that a chunk's triangle holds about 4096 (GPU) / 65536 elements."""
    shapes = []
    for chunk, budget in ((TRIANGLE_GPU, 4096), (TRIANGLE_CPU, 65536)):
        c = min(chunk, pow2(n))
        x = max(1, min(pow2(xn), budget // (c * c)))
        shapes.append(LaunchShape((math.ceil(xn / x),), {"XBLOCK": x, "RBLOCK": c}, 4))
    shapes[1].num_warps = 1
    return shapes[0], shapes[1]


def _scan_dtype(dtype: str) -> str:
    """Booleans scan as int32 (Triton's scans do not take int1)."""
    return "int32" if dtype == "bool" else compute_dtype(dtype)


@lowers("aten.cumsum.default", "aten.cumprod.default", "aten.logcumsumexp.default")
def cumulative(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """The output's dtype (the ``dtype`` argument, or int64 for integer inputs) is the type
    the input is cast to before the scan, as in PyTorch. The interpreter's form scans 16-bit
    floats in float32 and float32 sums and products in float64; the GPU's form of a float
    sum or product computes PyTorch's GPU result to the bit (see :func:`gpu_order`)."""
    src = args[0]
    name = node.target.split(".")[1]
    meta = node.outputs[0]
    assert meta is not None
    shape, dtype = tuple(meta.shape), meta.dtype
    if name == "logcumsumexp" and dtype not in FLOATS:
        raise Unsupported(f"logcumsumexp of {dtype} values")
    if src.numel == 0:
        return src
    rank = max(1, len(src.shape))
    dim = int(args[1] if len(args) > 1 else kwargs["dim"])
    dim = dim + rank if dim < 0 else dim
    if not src.shape:
        from services.generator.lowering.ops_views import _reshape

        src = _reshape(src, [1])
    scan = ScanValue(b, src, dim, name, dtype)
    return scan if tuple(src.shape) == shape else _shaped(scan.realize(), shape)


class ScanValue(FusedHost):
    """A sum, product or log-sum-exp scan's result, computed where it is stored (see
    ``FusedHost``): a pointwise value that reads it element for element (an exclusive scan
    written as ``cumsum(x) - x``, a scaled or shifted running total) is computed in the scan's
    own kernel from each scanned element, so the scan's result never goes to memory and back.
    Read any other way, it is stored by its own kernel."""

    def __init__(self, builder: Builder, src: Value, dim: int, name: str, dtype: str) -> None:
        super().__init__(builder, tuple(src.shape), dtype)
        self.src, self.dim, self.name = src, dim, name
        self.kind = name

    def fuse(self, value: Value, out: Buffer) -> Kernel:
        if value is self:  # stored as it is (a returned scan): its own kernel writes ``out``
            self._stored = Stored(out)
            return self._kernel(self.builder.kernel_name(self.kind), out, None)
        return super().fuse(value, out)

    def _kernel(self, name: str, out: Buffer, tile: TileEpilogue | None) -> Kernel:
        epilogue: ScanEpilogue | None = None
        if tile is not None:
            def epilogue(k: KernelWriter, index: list[Expr], var: str, store_raw: Callable[[Buffer, str], None]) -> str:
                # What the stored result would hold, as the epilogue would read it back.
                held = k.cast(k.cast(var, self.dtype), compute_dtype(self.dtype))
                return tile(k, index, held, "mask", store_raw)

        # float32 sums and products run in float64, as PyTorch accumulates them on the CPU: a
        # long float32 scan would otherwise drift past the comparison's tolerance.
        dtype, kind = self.dtype, KINDS[self.name]
        acc = "float64" if dtype == "float32" and self.name != "logcumsumexp" else _scan_dtype(dtype)
        kernel = scan_kernel(name, self.src, self.dim, kind, acc, [out], epilogue=epilogue)
        order = "combine" if kind.triangle else gpu_order(self.name, dtype, list(self.src.shape), self.dim)
        if order is not None:  # a second program, so a name of its own
            gpu_name = self.builder.kernel_name(self.kind + ("_epilogue" if tile is not None else ""))
            gpu = scan_kernel(gpu_name, self.src, self.dim, kind, dtype, [out], order=order, epilogue=epilogue)
            gpu.interpreter, gpu.cpu = kernel.writer, kernel.cpu
            kernel = gpu
        return kernel


def gpu_order(name: str, dtype: str, shape: list[int], dim: int) -> ScanOrder | None:
    """How the GPU form of a float sum or product scans so that its result is PyTorch's GPU
    result to the bit; None where it keeps the interpreter's exact form.

    PyTorch's GPU scan (ScanUtils.cuh) computes in the tensor's own type, rounding a 16-bit
    type after every step: along an outer dimension each column one element after another
    (tensor_kernel_scan_outer_dim), along the innermost one a row in chunks, each a Sklansky
    tree with the earlier chunks' total joined to its first element. An exact sum differs
    from that by PyTorch's own rounding, which on a long row passes the comparison's
    tolerance where the sum nears zero: 7.3e-4 over 11024 float32 elements (tolerance
    1e-4), and a 16-bit type rounds at every step. A tensor of a single row goes through
    CUB's scan, whose order is not reproduced: it keeps the exact form, as do float64 (its
    rounding is far below its tolerance) and logcumsumexp. The tunable SCAN_ORDER=exact
    keeps the exact form too: faster on some shapes, where its result passes the comparison
    (on an H200, 2026-11-28: 256 rows of 16384 in 0.069 against 0.102 ms; a float32 scan
    along an outer dim in 0.24 against 0.37 ms)."""
    if tunables.current().scan_order == "exact":
        return None
    if name == "logcumsumexp" or dtype not in ("float32", "float16", "bfloat16"):
        return None
    if numel(shape) == shape[dim]:
        return None
    return "tree" if dim == len(shape) - 1 else "sequential"


@lowers("aten.cummax.default", "aten.cummin.default")
def cumextreme(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    """Running maximum (minimum) and the index where it was reached: the latest index on
    ties, and a NaN stays once met, as in PyTorch."""
    src = args[0]
    name = node.target.split(".")[1]
    values_meta, index_meta = node.outputs[0], node.outputs[1]
    assert values_meta is not None and index_meta is not None
    if src.numel == 0:
        return [src, src]
    rank = max(1, len(src.shape))
    dim = int(args[1] if len(args) > 1 else kwargs["dim"])
    dim = dim + rank if dim < 0 else dim
    if not src.shape:
        from services.generator.lowering.ops_views import _reshape

        src = _reshape(src, [1])
    values = b.new_buffer(tuple(src.shape), values_meta.dtype, name)
    where = b.new_buffer(tuple(src.shape), index_meta.dtype, name + "_at")
    kind, acc = KINDS[name], _scan_dtype(src.dtype)
    kernel = scan_kernel(b.kernel_name(name), src, dim, kind, acc, [values, where])
    # The GPU's program scans each chunk with the combine (a second program, so a name of its own).
    gpu = scan_kernel(b.kernel_name(name), src, dim, kind, acc, [values, where], order="combine")
    gpu.interpreter, gpu.cpu = kernel.writer, kernel.cpu
    b.emit(gpu)
    return [_shaped(Stored(values), tuple(values_meta.shape)), _shaped(Stored(where), tuple(index_meta.shape))]


def _shaped(value: Value, shape: tuple[int, ...]) -> Value:
    """A 0-d result was scanned as one element: give it back its shape."""
    if tuple(value.shape) == shape:
        return value
    from services.generator.lowering.ops_views import _reshape

    return _reshape(value, list(shape))
