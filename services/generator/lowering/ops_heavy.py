"""Matrix products: ``mm``, ``bmm`` and ``addmm`` as tiled ``tl.dot`` kernels.

Operands are read through their loaders, so a transposed weight, a broadcast batch or a
pointwise prologue costs no copy; an operand that inlines real work is stored first, since
each tile would recompute it once per tile of the other operand. fp32 operands are
multiplied to fp32 accuracy (``input_precision="tf32x3"``: split into tf32 high and low parts
on tensor cores), as PyTorch does by default, never in plain tf32.
"""

from __future__ import annotations

import dataclasses

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from services.generator.lowering import tunables
from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import (Buffer, KernelWriter, Lazy, Stored, Unsupported, Value, and_masks,
                                           compute_dtype, on_views, peel_views, view)
from services.generator.lowering.kernels import (Kernel, LaunchShape, batched_form_ok, kernel_args, pow2, rounded,
                                                 tl_type)
from services.generator.lowering.ops_diag import Diagonal
from services.generator.lowering.ops_pointwise import elementwise, out_meta, scalar_code
from services.generator.lowering.products_split import TileLoad, split_operands, splits
from services.generator.lowering.rows import ReductionValue, same_index
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

# (index symbols b, m, n; the accumulator; the store mask) -> the value to store
Epilogue = Callable[[KernelWriter, list[Expr], str, str], str]
OPERAND_INLINE_LIMIT = 1


def operand(b: Builder, value: Value) -> Value:
    """A matrix product operand: views stay lazy, computed values are stored once. A computed
    value seen through views that reorder or repeat it (a transpose, a broadcast) is stored in
    its own layout and the views applied to the stored copy: storing the view would write it
    transposed (each lane reading far from its neighbour) and repeated."""
    if value.cost <= OPERAND_INLINE_LIMIT:
        return value
    current, views = peel_views(value, lambda step: step.view_of is not None and step.view_of.numel <= step.numel)
    if not views or current.cost <= OPERAND_INLINE_LIMIT:
        return b.realize(value, "operand")
    return on_views(b.realize(current, "operand"), views)


def narrow_operand(value: Value) -> tuple[Value, float] | None:
    """``value`` as (a float16 or bfloat16 value, a constant factor) when it is that value
    widened to float32, through index changes and products with constants: a float32 product
    of two such operands is the 16-bit product of their narrow values (exact: the product of two
    16-bit floats fits a float32) times both factors, to float32 rounding. None otherwise."""
    factor = 1.0
    views: list[Lazy] = []
    current = value
    while isinstance(current, Lazy):
        if current.widens is not None:
            narrow = current.widens
            if current.dtype != "float32" or narrow.dtype not in ("float16", "bfloat16"):
                return None
            return on_views(narrow, views), factor
        if current.scaled is not None:
            current, scale = current.scaled
            factor *= scale
        elif current.view_of is not None and current.remap is not None and current.dtype == current.view_of.dtype:
            views.append(current)
            current = current.view_of
        else:
            return None
    return None


# Elements of one operand tile under the interpreter. Each interpreted operation costs a fixed
# overhead besides its NumPy work, so tiles there are as large as that work stays cheap
# (Triton's interpreter refuses blocks of over 2^20 elements).
INTERPRETER_TILE = 1 << 18


# (kernel, z, m index, n index, accumulator, in-range mask): writes the finished tile
TileStore = Callable[[KernelWriter, Expr, Expr, Expr, str, str], None]


@dataclass(frozen=True)
class GemmBlocks:
    """Tile sizes of a tiled product on one device (each at least 16: ``tl.dot``'s minimum)."""

    m: int
    n: int
    k: int
    warps: int = 4
    stages: int = 0  # 0: Triton's default
    group_m: int = 1  # tile rows per group of the program order (1: row by row)


def dot_type(a_dtype: str, b_dtype: str) -> str:
    """The type ``tl.dot`` multiplies in: two operands of one 16-bit float type keep it
    (tensor cores, exact products, float32 accumulation; bfloat16 through tf32, see ``gemm``);
    anything else in float32, float64 when either operand is float64."""
    if a_dtype == b_dtype and a_dtype in ("float16", "bfloat16"):
        return a_dtype
    return "float64" if "float64" in (a_dtype, b_dtype) else "float32"


def gemm(name: str, batch: int, m: int, n: int, kdim: int, load_a: TileLoad, load_b: TileLoad,
         store: TileStore, outputs: list[Buffer], mul_type: str, wide: bool,
         gpu: GemmBlocks, cpu: GemmBlocks, k_inner: int = 0,
         low: tuple[TileLoad, TileLoad] | None = None) -> Kernel:
    """``store(z, i, j, sum_k load_a(z, i, k) * load_b(z, k, j))`` for every (z, i, j).

    One program computes a [BLOCK_M, BLOCK_N] tile of one batch entry ``z`` (grid axis 2),
    walking K in BLOCK_K steps; the loaders receive the row/column index symbols (``rm``,
    ``rka`` for A; ``rkb``, ``rn`` for B) and the mask of the in-range part of the tile.
    Under the interpreter, a product of many small matrices runs a batched form of the same
    kernel: ``BLOCK_Z`` batch entries per program, every tile three-dimensional.

    With ``gpu.group_m`` above 1 (a search's choice) the tiles of one batch entry are numbered
    along grid axis 0 and visited ``GROUP_M`` tile rows at a time, column by column within a
    group (the interpreter visits them row by row: ``GROUP_M`` 1, same source).

    With ``k_inner`` (which both BLOCK_Ks divide) K is walked as ``kdim / k_inner`` runs of
    ``k_inner``: the loaders receive ``kt * k_inner + rk``, the run ``kt`` one number per K
    step (a convolution's kernel tap, whose input offsets and bounds are then computed once
    per step rather than per element).

    With ``low`` (loaders of float32 operands' low parts, ``load_a`` and ``load_b`` then
    loading their TF32 high parts: ``split_operands``) each K step is three TF32 products,
    summed from zero and added to the accumulator in float32."""
    grouped = gpu.group_m > 1
    if k_inner and (k_inner % gpu.k or kdim % k_inner):
        raise ValueError(f"BLOCK_K {gpu.k} does not divide the K run {k_inner} of {kdim}")
    k = _gemm_writer(name, batch, m, n, kdim, load_a, load_b, store, mul_type, wide, batched=False,
                     grouped=grouped, k_inner=k_inner, low=low)
    args = kernel_args(k)
    bz = max(1, min(pow2(batch), INTERPRETER_TILE // (cpu.m * max(cpu.n, cpu.k)))) if batch > 1 else 1
    interpreter = None
    if bz > 1:
        batched = _gemm_writer(name + "_i", batch, m, n, kdim, load_a, load_b, store, mul_type, wide, batched=True,
                               grouped=grouped, low=low)
        if batched_form_ok(batched, args):
            interpreter = batched
    if interpreter is None and k_inner:
        # The interpreter walks K whole (up to 1024 per step, the runs' order unchanged):
        # it pays per step, not per element.
        plain = _gemm_writer(name + "_i", batch, m, n, kdim, load_a, load_b, store, mul_type, wide, batched=False,
                             grouped=grouped, low=low)
        if [id(a) for a in kernel_args(plain)] == [id(a) for a in args]:
            interpreter = plain
        else:
            while k_inner % cpu.k:
                cpu = dataclasses.replace(cpu, k=cpu.k // 2)
    gpu_meta = {"BLOCK_M": gpu.m, "BLOCK_N": gpu.n, "BLOCK_K": gpu.k}
    cpu_meta = {"BLOCK_M": cpu.m, "BLOCK_N": cpu.n, "BLOCK_K": cpu.k}
    if interpreter is not None:
        cpu_meta["BLOCK_Z"] = bz
    gpu_tiles = (math.ceil(m / gpu.m), math.ceil(n / gpu.n))
    cpu_tiles = (math.ceil(m / cpu.m), math.ceil(n / cpu.n))
    if grouped:
        gpu_meta["GROUP_M"], cpu_meta["GROUP_M"] = gpu.group_m, 1
        gpu_tiles, cpu_tiles = (gpu_tiles[0] * gpu_tiles[1], 1), (cpu_tiles[0] * cpu_tiles[1], 1)
    return Kernel(k, args,
                  LaunchShape((*gpu_tiles, batch), gpu_meta, gpu.warps, gpu.stages),
                  LaunchShape((*cpu_tiles, math.ceil(batch / cpu_meta.get("BLOCK_Z", 1))), cpu_meta, 1),
                  outputs, interpreter=interpreter)


def _gemm_writer(name: str, batch: int, m: int, n: int, kdim: int, load_a: TileLoad, load_b: TileLoad,
                 store: TileStore, mul_type: str, wide: bool, batched: bool, grouped: bool = False,
                 k_inner: int = 0, low: tuple[TileLoad, TileLoad] | None = None) -> KernelWriter:
    """The product's source: 2-d tiles of one batch entry per program, or (``batched``) 3-d
    tiles of ``BLOCK_Z`` entries, ``pid_z`` then naming the entries' column of indices.
    ``grouped``: grid axis 0 numbers the entry's tiles, visited in groups of ``GROUP_M`` rows."""
    k = KernelWriter(name)
    bm_, bn_, bk_ = k.constexpr("BLOCK_M"), k.constexpr("BLOCK_N"), k.constexpr("BLOCK_K")
    row, col = ("[None, :, None]", "[None, None, :]") if batched else ("[:, None]", "[None, :]")
    if grouped:
        gm_ = k.constexpr("GROUP_M")
        k.line("pid = tl.program_id(0)" + (".to(tl.int64)" if wide else ""))
        k.line(f"tiles_m = ({m} + {bm_} - 1) // {bm_}")
        k.line(f"in_group = {gm_} * (({n} + {bn_} - 1) // {bn_})")
        k.line(f"first_m = (pid // in_group) * {gm_}")
        k.line(f"rows_here = tl.minimum(tiles_m - first_m, {gm_})")
        k.line("pid_m = first_m + (pid % in_group) % rows_here")
        k.line("pid_n = (pid % in_group) // rows_here")
    else:
        k.line("pid_m = tl.program_id(0)" + (".to(tl.int64)" if wide else ""))
        k.line("pid_n = tl.program_id(1)" + (".to(tl.int64)" if wide else ""))
    k.line("pid_z = tl.program_id(2)" + (".to(tl.int64)" if wide else ""))
    zmask, tile = "", f"[{bm_}, {bn_}]"
    if batched:
        bz_ = k.constexpr("BLOCK_Z")
        k.line(f"pid_z = pid_z * {bz_} + tl.arange(0, {bz_})[:, None, None]")
        zmask, tile = f"(pid_z < {batch}) & ", f"[{bz_}, {bm_}, {bn_}]"
    k.wide_index = k.wide_index or wide
    z = range_symbol(f"z_{name}", batch) if batch > 1 else sympy.Integer(0)
    mi, ni = range_symbol(f"m_{name}", m), range_symbol(f"n_{name}", n)
    ka, kb = range_symbol(f"ka_{name}", k_inner or kdim), range_symbol(f"kb_{name}", k_inner or kdim)
    k.names.update({mi: "rm", ni: "rn", ka: "rka", kb: "rkb"})
    run = range_symbol(f"kt_{name}", kdim // k_inner) if k_inner else None
    if run is not None:
        k.names[run] = "kt"
    if batch > 1:
        k.names[z] = "pid_z"
    k.line(f"rm = pid_m * {bm_} + tl.arange(0, {bm_}){row}")
    k.line(f"rn = pid_n * {bn_} + tl.arange(0, {bn_}){col}")
    acc_type = accumulator_type(mul_type)
    k.line(f"acc = tl.zeros({tile}, {tl_type(acc_type)})")
    with k.block(f"for k0 in range(0, {kdim}, {bk_}):"):
        if run is not None:
            # Every lane of a K step lies in run kt (BLOCK_K divides the run): in range.
            k.line(f"kt = k0 // {k_inner}")
            k.line(f"rka = k0 % {k_inner} + tl.arange(0, {bk_}){col}")
            k.line(f"rkb = k0 % {k_inner} + tl.arange(0, {bk_}){row}")
            amask, bmask = f"{zmask}(rm < {m})", f"{zmask}(rn < {n})"
            a_k, b_k = run * k_inner + ka, run * k_inner + kb
        else:
            k.line(f"rka = k0 + tl.arange(0, {bk_}){col}")
            k.line(f"rkb = k0 + tl.arange(0, {bk_}){row}")
            amask = f"{zmask}(rm < {m}) & (rka < {kdim})"
            bmask = f"{zmask}(rkb < {kdim}) & (rn < {n})"
            a_k, b_k = ka, kb
        av = dot_operand(k, load_a(k, z, mi, a_k, amask), amask, mul_type, acc_type)
        bv = dot_operand(k, load_b(k, z, b_k, ni, bmask), bmask, mul_type, acc_type)
        if low is None:
            k.line(f"acc += tl.dot({av}, {bv}{dot_precision(mul_type)})")
        else:
            a_low = dot_operand(k, low[0](k, z, mi, a_k, amask), amask, mul_type, acc_type)
            b_low = dot_operand(k, low[1](k, z, b_k, ni, bmask), bmask, mul_type, acc_type)
            # The step's products from zero: the tensor cores' own sums truncate, so a running
            # accumulator taking every product drifted (6144^3: 0.022 off, 13x cuBLAS's error);
            # summed per step and added here, 0.0005 (docs/measurements/2026-11-29-float32-
            # products-split-once-h200).
            k.line(f'part = tl.dot({a_low}, {bv}, input_precision="tf32")')
            k.line(f'part = tl.dot({av}, {b_low}, part, input_precision="tf32")')
            k.line(f'acc += tl.dot({av}, {bv}, part, input_precision="tf32")')
    k.dtypes["acc"] = acc_type
    store(k, z, mi, ni, "acc", f"{zmask}(rm < {m}) & (rn < {n})")
    return k


def dot_precision(mul_type: str) -> str:
    """The ``input_precision`` argument of a ``tl.dot`` whose operands are ``mul_type``."""
    if mul_type == "bfloat16":
        # Under the interpreter the operands are float32 (see BF16_DOT): tf32 products of
        # them are exact. On a GPU the operands are bfloat16 and the argument has no effect.
        return ', input_precision="tf32"'
    if mul_type == "float32":
        # Three tf32 products (hi*hi + hi*lo + lo*hi): float32 accuracy on tensor cores,
        # several times the speed of an FMA product ("ieee"); one where the job allows TF32;
        # FMAs in K order where the search asked for them (FLOAT32_PRODUCT).
        return f', input_precision="{tunables.current().dot_float32()}"'
    return ""


def accumulator_type(mul_type: str) -> str:
    """The type a product multiplying in ``mul_type`` accumulates (and clears its tiles) in."""
    return "float64" if mul_type == "float64" else "float32"


# A kernel constexpr: True where the kernel runs on a GPU. bfloat16 tiles then feed the
# tensor cores in their own type; Triton's interpreter has no bfloat16 product, so there they
# go through float32 (tf32 products, exact: every bfloat16 value is a tf32 value). Both give
# the same exact products summed in float32. emit.py sets it at every launch.
BF16_DOT = "BF16_DOT"


def as_bf16_operand(k: KernelWriter, narrow: str, wide: str) -> str:
    """A bfloat16 dot operand: ``narrow`` (a bfloat16 tile) on a GPU, ``wide`` (the same
    values in float32) under the interpreter."""
    return k.var(f"{narrow} if {k.constexpr(BF16_DOT)} else {wide}", "float32")


def dot_operand(k: KernelWriter, value: str, mask: str, mul_type: str, acc_type: str) -> str:
    """A tile ready for ``tl.dot``. A buffer's elements loaded under the tile's own mask go in
    as loaded: masked lanes hold 0 already, and a 16-bit tile feeds the tensor cores in its
    own type (widening it to float32 and narrowing it back cost every K step a conversion of
    the whole tile and kept the operand in registers: 16-bit products ran at half cuBLAS's
    speed). Anything computed is cleared outside the mask, then put in the product's type."""
    raw, load_mask, dtype = k.loads.get(value, ("", None, ""))
    # Loaded under the tile's mask or a narrower one (a convolution's padding): 0 outside it.
    if raw and (load_mask == mask or (load_mask or "").startswith(f"({mask} & ")):
        if dtype == mul_type and mul_type != "bfloat16":
            return raw
        if dtype == mul_type:
            return as_bf16_operand(k, raw, k.cast(value, acc_type))
        if mul_type != "float16":
            return k.cast(value, acc_type)
    clean = k.var(f"tl.where({mask}, {k.cast(value, acc_type)}, 0.0)", acc_type)
    if mul_type == "bfloat16":
        return as_bf16_operand(k, f"{clean}.to(tl.bfloat16)", clean)
    return k.cast(clean, mul_type) if mul_type == "float16" else clean


def matmul(b: Builder, name: str, a: Value, bm: Value, out: Buffer, batch: int, m: int, n: int, kdim: int,
           a_index: Callable[[Expr, Expr, Expr], list[Expr]], b_index: Callable[[Expr, Expr, Expr], list[Expr]],
           epilogue: Epilogue | None = None) -> Kernel:
    """``out[z, i, j] = epilogue(sum_k a[a_index(z, i, k)] * b[b_index(z, k, j)])``."""
    wide = batch * m * n >= 2**31 or a.numel >= 2**31 or bm.numel >= 2**31

    def load_a(k: KernelWriter, z: Expr, i: Expr, kk: Expr, mask: str) -> str:
        return a.load(k, a_index(z, i, kk), mask)

    def load_b(k: KernelWriter, z: Expr, kk: Expr, j: Expr, mask: str) -> str:
        return bm.load(k, b_index(z, kk, j), mask)

    def store(k: KernelWriter, z: Expr, i: Expr, j: Expr, acc: str, mask: str) -> None:
        value = epilogue(k, [z, i, j], acc, mask) if epilogue else acc
        k.line(f"tl.store({k.pointer(out)} + pid_z * {m * n} + rm * {n} + rn, {k.cast(value, out.dtype)}, "
               f"mask={mask})")

    mul = dot_type(a.dtype, bm.dtype)
    halves = split_operands(b, a, bm, batch, m, n, kdim, a_index, b_index) if splits(mul, batch, m, n, kdim) else None
    if halves is None:
        return gemm(name, batch, m, n, kdim, load_a, load_b, store, [out], mul, wide, gpu_blocks(mul, batch, m, n),
                    interpreter_blocks(m, n, kdim))
    (a_high, a_low), (b_high, b_low) = halves

    def split_a(part: Value) -> TileLoad:
        return lambda k, z, i, kk, mask: part.load(k, [z, i, kk] if batch > 1 else [i, kk], mask)

    def split_b(part: Value) -> TileLoad:  # stored K-major: [batch, n, k]
        return lambda k, z, kk, j, mask: part.load(k, [z, j, kk] if batch > 1 else [j, kk], mask)

    return gemm(name, batch, m, n, kdim, split_a(a_high), split_b(b_high), store, [out], mul, wide,
                split_blocks(), interpreter_blocks(m, n, kdim), low=(split_a(a_low), split_b(b_low)))


def split_blocks() -> GemmBlocks:
    """GPU tiles of a product of split operands (which has two waves of them or more:
    ``products_split.splits``): 128 x 128 x 32, 8 warps, 3 stages ran fastest of five shapes
    on an H200 on three products (2048^3 to 6144^3; with 4 warps 2.7x slower), each stage
    holding both parts of both tiles."""
    return tuned(GemmBlocks(128, 128, 32, 8), "float32", parts=2)


def interpreter_blocks(m: int, n: int, kdim: int) -> GemmBlocks:
    """Tiles of a product under the interpreter: the whole K (up to 1024) and as many rows and
    columns as keep every tile within ``INTERPRETER_TILE`` elements."""
    bm, bn = max(16, min(512, pow2(m))), max(16, min(256, pow2(n)))
    bk = max(16, min(1024, pow2(kdim), INTERPRETER_TILE // max(bm, bn)))
    return GemmBlocks(bm, bn, bk, 1)


def gpu_blocks(mul_type: str, batch: int, m: int, n: int) -> GemmBlocks:
    """GPU tiles of a product: 16-bit operands run on tensor cores in large tiles; float32
    products (exact, no tensor cores) in 128 x 64 x 16 tiles, measured 1.4-2.4x faster than
    64 x 64 x 32 on an H100 (2026-11-24). Small outputs take smaller tiles, so the grid still
    fills the GPU."""
    if mul_type in ("float16", "bfloat16"):
        bm, bn, bk, warps = 128, 128, 32, 8
    else:
        bm, bn, bk, warps = 128, 64, 16, 4
    bm, bn = min(bm, max(16, pow2(m))), min(bn, max(16, pow2(n)))
    while bm > 32 and batch * math.ceil(m / bm) * math.ceil(n / bn) < 132:  # 132 SMs on an H100
        bm //= 2
    return tuned(GemmBlocks(bm, bn, bk, warps), mul_type)


# Shared memory the operand tiles of all pipeline stages may take: an H100 has 227 KiB per
# block; the rest is for the epilogue and Triton's own scratch.
SMEM_BUDGET = 200 * 1024


def tuned(blocks: GemmBlocks, mul_type: str, parts: int = 1) -> GemmBlocks:
    """``blocks`` with the search's tile and warp choices, where it made any, and no more
    pipeline stages than the operand tiles (``parts`` of each: a split product loads two)
    fit in shared memory (a search that grows the tiles would otherwise write a kernel the
    GPU cannot launch)."""
    t = tunables.current()
    m, n, k = t.block_m or blocks.m, t.block_n or blocks.n, t.block_k or blocks.k
    per_stage = parts * (m * k + k * n) * (2 if mul_type in ("float16", "bfloat16") else 4)
    stages = max(1, min(t.num_stages, SMEM_BUDGET // per_stage))
    return GemmBlocks(m, n, k, t.num_warps if t.num_warps != 4 else blocks.warps, stages, max(1, t.group_m))


@lowers("aten.mm.default", "aten.bmm.default", "aten.addmm.default")
def mm(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    shape, dtype = out_meta(node)
    addmm = node.target.startswith("aten.addmm")
    bias, x, y = (args[0], args[1], args[2]) if addmm else (None, args[0], args[1])
    if not addmm:
        scaled = _diagonal_product(x, y, shape, dtype)
        if scaled is not None:
            return scaled
    x, y = operand(b, x), operand(b, y)
    if len(x.shape) == 3:
        batch, m, kdim = x.shape
        n = y.shape[2]

        def ai(z: Expr, i: Expr, kk: Expr) -> list[Expr]:
            return [z, i, kk]

        def bi(z: Expr, kk: Expr, j: Expr) -> list[Expr]:
            return [z, kk, j]
    else:
        batch, (m, kdim), n = 1, x.shape, y.shape[1]

        def ai(z: Expr, i: Expr, kk: Expr) -> list[Expr]:
            return [i, kk]

        def bi(z: Expr, kk: Expr, j: Expr) -> list[Expr]:
            return [kk, j]
    if not addmm and m == 1 and n == 1:
        return _as_reduction(b, tuple(shape), dtype, x, y, (batch, m, kdim, n), len(x.shape) == 3, ai, bi)
    epilogue = None
    if addmm:
        beta = kwargs.get("beta", 1)
        alpha = kwargs.get("alpha", 1)
        epilogue = _addmm_epilogue(bias, beta, alpha, (m, n))
    return ProductValue(b, tuple(shape), dtype, x, y, batch, m, n, kdim, ai, bi, epilogue)


def _diagonal_product(x: Value, y: Value, shape: Sequence[int], dtype: str) -> Value | None:
    """``diag(v) @ y`` as ``v[..., :, None] * y`` and ``x @ diag(v)`` as ``x * v[..., None, :]``
    (ops_diag): each output of the product is one product plus zeros, the same value for
    finite operands, without the matrix or the product's work. None for other operands."""
    rank = len(shape)
    for side, d in ((0, _same_index(x)), (1, _same_index(y))):
        if isinstance(d, Diagonal) and d.offset == 0 and (d.dim1, d.dim2) == (rank - 2, rank - 1):
            other = y if side == 0 else x
            # The vector's element for output (..., i, j): its row i (left) or column j (right).
            scale = view(d.vector, shape, lambda idx, s=side: [*idx[:-2], idx[-2] if s == 0 else idx[-1]])
            return elementwise(shape, dtype, [scale, other], dtype, lambda k, a: f"({a[0]} * {a[1]})")
    return None


def _same_index(value: Value) -> Value:
    """``value`` without the index changes that read every element where it is (a batched
    product's operands, expanded and reshaped to the shape they have)."""
    def identity(step: Lazy) -> bool:
        assert step.view_of is not None and step.remap is not None  # peel_views offers views only
        index = [range_symbol(f"same{d}", n) for d, n in enumerate(step.shape)]
        return tuple(step.shape) == tuple(step.view_of.shape) and [sympy.expand(e) for e in step.remap(index)] == index

    return peel_views(value, identity)[0]


def _as_reduction(b: Builder, shape: tuple[int, ...], dtype: str, x: Value, y: Value,
                  sizes: tuple[int, int, int, int], batched: bool,
                  ai: Callable[[Expr, Expr, Expr], list[Expr]],
                  bi: Callable[[Expr, Expr, Expr], list[Expr]]) -> Value:
    """A product whose every output is one dot product of two vectors (``bd,bd->b``): a sum
    over k of x * y, read as a reduction. As a matrix product it is one 16x16 tensor-core
    tile per scalar, one program each; as a reduction it streams both operands at memory
    speed and fuses with what reads it (1.72x torch.compile on the H100 for 65536 x 512).
    Matrix-vector products stay products: a row walk of a transposed weight reads it across
    its rows (2.19 ms against torch.compile's 0.38 ms on the H100 for an 8192 x 32768 weight)."""
    batch, m, kdim, n = sizes
    work = compute_dtype(dtype)

    def fn(k: KernelWriter, ix: Sequence[Expr], mask: str | None) -> str:
        z, i, kk, j = ix if batched else (sympy.Integer(0), *ix)
        left = k.cast(x.load(k, ai(z, i, kk), mask), work)
        right = k.cast(y.load(k, bi(z, kk, j), mask), work)
        return k.var(f"({left} * {right})", work)

    src_shape = (batch, m, kdim, n) if batched else (m, kdim, n)
    src = Lazy(src_shape, work, fn, 1 + x.cost + y.cost)
    return ReductionValue(b, src, [len(src_shape) - 2], "sum", shape, dtype)


# (kernel, the fused value's index, the product's value there, mask, raw store) -> value to store,
# where raw store(buffer, value code) writes the raw product at the tile's own offset.
TileEpilogue = Callable[[KernelWriter, list[Expr], str, str, Callable[[Buffer, str], None]], str]


class FusedHost(Value):
    """A product-like result (a matrix product, an implicit-GEMM convolution) computed where it
    is stored: a pointwise value that reads it element for element (bias, activation, scale:
    an epilogue) is computed in its own kernel, so the result never goes to memory and back.
    Read any other way, it is stored by its own kernel (or, when an epilogue kernel already
    computes it, by that kernel too: its raw store is switched on instead of computing it
    again). Subclasses write the kernel (``_kernel``)."""

    fusable = True
    kind = "mm"

    def __init__(self, builder: Builder, shape: tuple[int, ...], dtype: str) -> None:
        self.builder = builder
        self.shape, self.dtype = tuple(shape), dtype
        self.cost = 0
        self._stored: Stored | None = None
        self._fused: Kernel | None = None  # the epilogue kernel that computes this result
        self._raw: Buffer | None = None

    def _kernel(self, name: str, out: Buffer, tile: TileEpilogue | None) -> Kernel:
        raise NotImplementedError

    @property
    def realized(self) -> bool:
        return self._stored is not None or self._fused is not None

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        tile = getattr(k, "product_tile", None)
        if tile is not None and tile[0] is self and same_index(index, tile[1]):
            return tile[2]
        if getattr(k, "probing", False):
            # Probed as what it holds: a 16-bit or float32 product as float32, a float64 one
            # as float64, an integer scan (a count) as an integer.
            k.pending_products.append((self, list(index)))  # type: ignore[attr-defined]
            held = compute_dtype(self.dtype)
            return k.var(f"tl.full([1], 0, {tl_type(held)})", held)
        return self.realize().load(k, index, mask)

    def realize(self) -> Stored:
        if self._stored is not None:
            return self._stored
        if self._fused is not None and self._raw is not None:
            # The epilogue kernel computes this result already: let it store it as well.
            for shape in (self._fused.gpu, self._fused.cpu):
                shape.meta["STORE_RAW"] = 1
            self.builder.keep(self._raw)
            self._stored = Stored(self._raw)
            return self._stored
        out = self.builder.new_buffer(self.shape, self.dtype, self.kind)
        self.builder.emit(self._kernel(self.builder.kernel_name(self.kind), out, None))
        self._stored = Stored(out)
        return self._stored

    def fuse(self, value: Value, out: Buffer) -> Kernel:
        """The kernel storing ``value`` (which reads this result element for element) into
        ``out``; the raw result is stored too only if something reads it later."""
        raw = Buffer(f"{out.name}_raw", self.shape, self.dtype)
        rank = len(value.shape)

        def tile(k: KernelWriter, index: list[Expr], base: str, mask: str,
                 store_raw: Callable[[Buffer, str], None]) -> str:
            base = rounded(k, base, self.dtype)
            flag = k.constexpr("STORE_RAW")
            # Cast before the branch: a cast writes a line of its own, which inside the branch
            # would sit at the wrong depth (the compiler drops it when STORE_RAW is 0).
            raw_value = k.cast(base, raw.dtype)
            with k.block(f"if {flag}:"):
                store_raw(raw, raw_value)
            k.product_tile = (self, index, base)  # type: ignore[attr-defined]
            result = value.load(k, index if rank == len(index) else index[-rank:], mask)
            k.product_tile = None  # type: ignore[attr-defined]
            return result

        kernel = self._kernel(self.builder.kernel_name(f"{self.kind}_epilogue"), out, tile)
        for shape in (kernel.gpu, kernel.cpu):
            shape.meta["STORE_RAW"] = 0
        self._fused, self._raw = kernel, raw
        return kernel


class ProductValue(FusedHost):
    """A matrix product's result (see ``FusedHost``)."""

    def __init__(self, builder: Builder, shape: tuple[int, ...], dtype: str, x: Value, y: Value, batch: int,
                 m: int, n: int, kdim: int, ai: Callable[[Expr, Expr, Expr], list[Expr]],
                 bi: Callable[[Expr, Expr, Expr], list[Expr]], epilogue: Epilogue | None) -> None:
        super().__init__(builder, shape, dtype)
        self.x, self.y = x, y
        self.batch, self.m, self.n, self.kdim = batch, m, n, kdim
        self.ai, self.bi, self.epilogue = ai, bi, epilogue

    def tile_index(self, z: Expr, i: Expr, j: Expr) -> list[Expr]:
        return [z, i, j] if self.batch > 1 or len(self.shape) == 3 else [i, j]

    def _kernel(self, name: str, out: Buffer, tile: TileEpilogue | None) -> Kernel:
        if tile is None:
            return matmul(self.builder, name, self.x, self.y, out, self.batch, self.m, self.n, self.kdim,
                          self.ai, self.bi, self.epilogue)

        def epilogue(k: KernelWriter, idx: list[Expr], acc: str, mask: str) -> str:
            base = self.epilogue(k, idx, acc, mask) if self.epilogue else acc

            def store_raw(raw: Buffer, value: str) -> None:
                k.line(f"tl.store({k.pointer(raw)} + pid_z * {self.m * self.n} + rm * {self.n} + rn, "
                       f"{value}, mask={mask})")

            return tile(k, self.tile_index(*idx), base, mask, store_raw)

        return matmul(self.builder, name, self.x, self.y, out, self.batch, self.m, self.n, self.kdim,
                      self.ai, self.bi, epilogue)


def _addmm_epilogue(bias: Any, beta: Any, alpha: Any, mn: tuple[int, int]) -> Epilogue:
    def epilogue(k: KernelWriter, idx: list[Expr], acc: str, mask: str) -> str:
        value = acc
        if alpha != 1:
            value = k.var(f"{acc} * {scalar_code(k, alpha, 'float32')}", k.dtype(acc))
        if isinstance(bias, Value) and beta != 0:
            rank = len(bias.shape)
            full = [idx[1], idx[2]]
            bidx = [sympy.Integer(0) if s == 1 else full[len(full) - rank + i] for i, s in enumerate(bias.shape)]
            bv = k.cast(bias.load(k, bidx, mask), k.dtype(acc))
            if beta != 1:
                bv = k.var(f"{bv} * {scalar_code(k, beta, 'float32')}", k.dtype(acc))
            value = k.var(f"{value} + {bv}", k.dtype(acc))
        return value

    return epilogue


__all__ = ["GemmBlocks", "TileLoad", "TileStore", "and_masks", "dot_type", "gemm", "matmul", "operand",
           "tl_type"]
