"""Kernels the lowering writes itself: storing a value (pointwise) and reducing one.

Both iterate over their output's elements in flat order, one block per program; the index
symbols of each output dimension are derived from the flat position, so any value (views,
broadcasts, gathers) can be read at them. A reduction also walks the reduced elements in
chunks, in a loop. Launch shapes are fixed per device: small blocks and several warps on a
GPU, large blocks under the interpreter (each program there costs interpreter overhead).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy

from services.generator.lowering import tunables
from services.generator.lowering.indexing import linear, numel, range_symbol
from services.generator.lowering.ir import Buffer, KernelWriter, RuntimeScalar, Value

Combine = Callable[[KernelWriter, str, str], str]


@dataclass
class LaunchShape:
    grid: tuple[int, ...]
    meta: dict[str, int]
    num_warps: int = 4
    num_stages: int = 0  # 0: Triton's default


@dataclass
class Kernel:
    writer: KernelWriter
    args: list[Buffer | RuntimeScalar]  # run-time arguments, in parameter order
    gpu: LaunchShape
    cpu: LaunchShape
    outputs: list[Buffer] = field(default_factory=list)
    # Another source of the same kernel, launched under the interpreter with ``cpu`` (the same
    # run-time arguments): a form that does more per program, where each program costs a
    # fixed overhead per operation.
    interpreter: KernelWriter | None = None


# What a kernel's own lines write only in two dimensions: a 2-d axis expander, or a reduction
# along an axis counted for 2-d tiles. A batched (3-d) form whose loaders or epilogues wrote
# such a line would compute something else, and is not used.
_TWO_D = re.compile(r"\[:, None\]|\[None, :\]|tl\.(sum|max|min|argmax|argmin|reduce|cumsum|cumprod|"
                    r"associative_scan|sort|histogram|xor_sum)\(")


def batched_form_ok(writer: KernelWriter, args: list[Buffer | RuntimeScalar],
                    own: tuple[str, ...] = ()) -> bool:
    """Whether ``writer``, a batched form of a kernel with run-time arguments ``args``, takes
    the same arguments and holds no 2-d-only line (beyond the form's own reductions ``own``)."""
    if [id(a) for a in kernel_args(writer)] != [id(a) for a in args]:
        return False
    text = "\n".join(writer.lines)
    for allowed in own:
        text = text.replace(allowed, "")
    return _TWO_D.search(text) is None


def pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def kernel_args(writer: KernelWriter) -> list[Buffer | RuntimeScalar]:
    """The kernel's run-time arguments in parameter order: buffers and attribute scalars."""
    order: dict[str, Buffer | RuntimeScalar] = {pname: buf for buf, pname in writer.buffers.values()}
    order.update({pname: scalar for scalar, pname in writer.scalars.items()})
    return [order[p.name] for p in writer.params if p.kind in ("ptr", "scalar")]


def out_symbols(k: KernelWriter, shape: Sequence[int], flat: str, prefix: str) -> list[sympy.Expr]:
    """Index symbols of each dimension of ``shape``, defined from the flat position ``flat``."""
    symbols: list[sympy.Expr] = []
    stride = 1
    strides = []
    for size in reversed(shape):
        strides.append(stride)
        stride *= max(1, int(size))
    strides.reverse()
    for d, (size, st) in enumerate(zip(shape, strides, strict=True)):
        if size == 1:
            symbols.append(sympy.Integer(0))
            continue
        sym = range_symbol(f"{prefix}{d}_{k.name}", size)
        name = f"{prefix}{d}"
        code = flat if st == 1 and d == 0 else (f"{flat} % {size}" if st == 1 else
                                                  f"({flat} // {st})" if d == 0 else f"({flat} // {st}) % {size}")
        k.line(f"{name} = {code}")
        k.names[sym] = name
        symbols.append(sym)
    return symbols


def pointwise_kernel(name: str, value: Value, out: Buffer,
                     layout: tuple[Sequence[int], int] | None = None) -> Kernel:
    """``out[i] = value[i]`` for every element of ``value``; with ``layout`` = (strides,
    offset), element i goes to ``out``'s storage at ``offset + sum i*stride`` instead of
    its contiguous place (a storage some view addresses)."""
    k = KernelWriter(name)
    n = numel(value.shape)
    block = k.constexpr("BLOCK")
    k.line("pid = tl.program_id(0)")
    wide = n >= 2**31
    k.line(f"xlin = pid.to(tl.int64) * {block} + tl.arange(0, {block})" if wide
           else f"xlin = pid * {block} + tl.arange(0, {block})")
    k.line(f"xmask = xlin < {n}")
    idx = out_symbols(k, value.shape, "xlin", "x")
    k.aliases[sympy.expand(linear(idx, value.shape))] = "xlin"
    var = value.load(k, idx, "xmask")
    if layout is None:
        k.store(out, linear(idx, value.shape), var, "xmask")
    else:
        strides, offset = layout
        k.store(out, offset + sympy.Add(*[i * s for i, s in zip(idx, strides, strict=True)]), var, "xmask")
    gpu_block, warps = pointwise_launch(n)
    cpu_block = min(16384, pow2(n))
    return Kernel(k, kernel_args(k), LaunchShape((math.ceil(n / gpu_block),), {"BLOCK": gpu_block}, warps),
                  LaunchShape((math.ceil(n / cpu_block),), {"BLOCK": cpu_block}, 1), [out])


# Programs a launch should leave where fewer items a program can give them, and the count
# under which a launch has fewer programs than a GPU has SMs (each then runs alone on one).
ENOUGH_PROGRAMS, FEW_PROGRAMS = 1024, 128
# The smallest block a pointwise kernel of the default block shrinks to.
POINTWISE_MIN_BLOCK = 256


def spread(count: int, per_program: int, least: int) -> int:
    """``per_program`` halved, not below ``least``, while ``count`` items so shared out leave
    fewer than ``ENOUGH_PROGRAMS`` programs: few items run on many programs."""
    while per_program > least and math.ceil(count / per_program) < ENOUGH_PROGRAMS:
        per_program //= 2
    return per_program


def pointwise_launch(n: int) -> tuple[int, int]:
    """(BLOCK, num_warps) of a pointwise kernel over ``n`` elements on a GPU: the search's
    block and warps, but where both are the defaults (1024, 4) a small tensor's block halves,
    down to 256 elements on two warps, until 1024 programs run. Measured on an H200
    (2026-11-28, ``tools/launch_sweep.py --pointwise`` on 33 random and corpus pointwise
    specs): tensors under a million elements ran up to 4.3x faster (a tanh GELU over 170592
    float16 values, 0.025 against 0.0058 ms), as a few large programs left most of the GPU
    idle; larger tensors kept their launch, which was within 5% of the best measured on
    all but two of them."""
    tuned = tunables.current()
    block = min(tuned.pointwise_block, pow2(n))
    defaults = tunables.Tunables
    if tuned.pointwise_block != defaults.pointwise_block or tuned.num_warps != defaults.num_warps:
        return block, tuned.num_warps
    block = spread(n, block, POINTWISE_MIN_BLOCK)
    return block, max(2, min(4, block // 128))


@dataclass
class ReductionSpec:
    """One reduction: ``combine`` folds values into an accumulator that starts at ``init``,
    ``finish`` folds the block's accumulators along axis 1, keeping it ([XBLOCK, 1])."""

    init: str
    combine: Combine
    finish: Callable[[KernelWriter, str], str]
    acc_dtype: str


def reduction_kernel(name: str, out: Buffer, kept: Sequence[int], reduced: Sequence[int],
                     read: Callable[[KernelWriter, list[sympy.Expr], list[sympy.Expr], str], str],
                     spec: ReductionSpec, passes: int = 1,
                     between: Callable[[KernelWriter, str, int], None] | None = None,
                     unroll: bool = False) -> Kernel:
    """``out[x] = reduce_r read(x, r)`` over the ``reduced`` sizes, for each ``kept`` index x.

    ``read(k, x_index, r_index, mask)`` loads the value at output index x, reduced index r.
    With ``passes`` > 1 the reduced elements are walked again (a variance's second pass);
    ``between(k, result, pass)`` runs after each pass but the last. ``unroll``: the walk over
    the reduced elements is unrolled (``tl.static_range``), for a few short steps."""
    k = KernelWriter(name)
    xn, rn = numel(kept), numel(reduced)
    xblock, rblock = k.constexpr("XBLOCK"), k.constexpr("RBLOCK")
    k.line("pid = tl.program_id(0)")
    wide = xn * rn >= 2**31
    k.line(f"xlin = pid.to(tl.int64) * {xblock} + tl.arange(0, {xblock})[:, None]" if wide
           else f"xlin = pid * {xblock} + tl.arange(0, {xblock})[:, None]")
    k.line(f"xmask = xlin < {xn}")
    xs = out_symbols(k, kept, "xlin", "x")
    result = ""
    for p in range(passes):
        acc = k.fresh("acc")
        k.line(f"{acc} = tl.full([{xblock}, {rblock}], {spec.init}, tl.{_tl(spec.acc_dtype)})")
        k.dtypes[acc] = spec.acc_dtype
        with k.block(f"for roff in {'tl.static_range' if unroll else 'range'}(0, {rn}, {rblock}):"):
            k.line(f"rlin = roff + tl.arange(0, {rblock})[None, :]")
            k.line(f"rmask = rlin < {rn}")
            k.line("mask = xmask & rmask")
            rs = out_symbols(k, reduced, "rlin", "r")
            k.aliases[sympy.expand(linear([*xs, *rs], [*kept, *reduced]))] = (
                f"(xlin * {rn} + rlin)" if rn > 1 else "xlin")
            value = read(k, xs, rs, "mask")
            k.line(f"{acc} = tl.where(mask, {spec.combine(k, acc, value)}, {acc})")
        result = spec.finish(k, acc)
        if between is not None and p < passes - 1:
            between(k, result, p)
    k.line(f"tl.store({k.pointer(out)} + xlin, {k.cast(result, out.dtype)}, mask=xmask)")
    return Kernel(k, kernel_args(k), *reduction_launch(xn, rn), outputs=[out])


def reduction_launch(xn: int, rn: int, run: int = 1) -> tuple[LaunchShape, LaunchShape]:
    """(GPU, interpreter) launch shapes of a reduction of ``xn`` outputs over ``rn`` elements,
    neighbouring outputs ``run`` in a row in memory (``run_after``): a column walk where
    ``walks_columns``."""
    if walks_columns(rn, run):
        return column_launch(xn, rn, run)
    gpu_r = min(pow2(rn), 1024)
    gpu_x = max(1, min(pow2(xn), 4096 // gpu_r))
    cpu_r = min(pow2(rn), 8192)
    cpu_x = max(1, min(pow2(xn), 65536 // cpu_r))
    return (LaunchShape((math.ceil(xn / gpu_x),), {"XBLOCK": gpu_x, "RBLOCK": gpu_r}, 8 if gpu_r >= 512 else 4),
            LaunchShape((math.ceil(xn / cpu_x),), {"XBLOCK": cpu_x, "RBLOCK": cpu_r}, 1))


# Reductions whose kept elements run this many (or more) in a row in memory walk columns.
COLUMN_RUN = 16


def run_after(shape: Sequence[int], dims: Sequence[int]) -> int:
    """Kept elements in a row in memory after the last reduced dim (1: rows are contiguous)."""
    return numel(list(shape)[max(dims) + 1:]) if dims else 1


def walks_columns(rn: int, run: int) -> bool:
    """Whether a reduction (or scan) over rows of ``rn`` elements, neighbouring rows ``run``
    in a row in memory, walks columns (column_launch): rows apart in memory and longer than
    128, where a program holding whole rows (4096 elements) would read runs of fewer than 32
    elements (under a 128-byte line of float32). Shorter rows keep whole rows: a column walk
    of them measured slower (an ``any`` over 128 booleans 0.84x)."""
    return run >= COLUMN_RUN and pow2(rn) > 128


def column_launch(xn: int, rn: int, run: int, sliced: bool = False) -> tuple[LaunchShape, LaunchShape]:
    """Launch shapes of a walk over ``xn`` columns of ``rn`` elements whose columns lie ``run``
    in a row in memory: up to 256 neighbouring columns per GPU program, fewer (down to 2)
    while that leaves under 1024 programs, a chunk of 4096, four warps. A walk whose columns
    are also cut into slices (``sliced``, rows.split_kernel) finds its programs in the
    slices: it keeps at least 32 columns a program (a 128-byte run of float32) and eight
    warps for 4096 elements, as before; the narrower walk measured 0.6-0.75x there.

    Measured on an H200 (2026-11-28, ``tools/launch_sweep.py`` over random
    reductions and scans, docs/measurements): few columns want many programs more than long
    runs, so the old floor of 32 columns (a 128-byte run of float32) left 16 to 32 programs
    on 512 to 1024 columns: an argmax over 512 columns of 4072 ran 3.3x faster at 2 columns a
    program than at 32, an integer cumsum over 1024 columns of 352 2.8x. Four warps beat
    eight on every column walk of the sweep, by up to 1.3x."""
    gx = spread(xn, max(1, min(pow2(xn), pow2(run), 256)), 32 if sliced else 2)
    gr = max(1, min(pow2(rn), 4096 // gx))
    cr = min(pow2(rn), 8192)
    cx = max(1, min(pow2(xn), 65536 // cr))
    # Fewer programs than a GPU has SMs: each runs alone on its SM, where eight warps keep
    # more loads in flight (a single-program sum of 2048 ran 0.84x on four).
    few = math.ceil(xn / gx) < FEW_PROGRAMS
    warps = 8 if (sliced or few) and gx * gr >= 4096 else 4
    return (LaunchShape((math.ceil(xn / gx),), {"XBLOCK": gx, "RBLOCK": gr}, warps),
            LaunchShape((math.ceil(xn / cx),), {"XBLOCK": cx, "RBLOCK": cr}, 1))


def _tl(dtype: str) -> str:
    return {"bool": "int1"}.get(dtype, dtype)


def tl_type(dtype: str) -> str:
    return "tl." + _tl(dtype)


# A kernel constexpr: True where the kernel runs on an NVIDIA GPU, whose PTX its helpers may
# use (mathlib's _kv_round_bf16). emit.py sets it at every launch: False under the interpreter
# and on other GPUs.
PTX = "PTX"


def rounded(k: KernelWriter, var: str, dtype: str) -> str:
    """A float32 result as a ``dtype`` tensor holds it: a 16-bit result is rounded before
    anything fused after it reads it, as PyTorch stores it before the next operator does."""
    if dtype == "bfloat16" and k.packed_rounding:
        k.helpers.add("_kv_round_bf16")
        return k.var(f"_kv_round_bf16({var}, {k.constexpr(PTX)})", "float32")
    if dtype in ("float16", "bfloat16"):
        return k.var(f"{var}.to({tl_type(dtype)}).to(tl.float32)", "float32")
    return var
