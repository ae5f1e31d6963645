"""float32 matrix products at float32 accuracy on tensor cores, with operands split once.

A float32 value is the sum of its TF32 part (sign, exponent, top 10 mantissa bits) and a
float32 rest; the product of two is high*high + high*low + low*high to float32 accuracy (the
low*low term lies below float32's rounding). Triton's ``tf32x3`` splits every operand tile at
every K step, in registers, and writes B's parts back to shared memory. Here each operand is
split once, by a tiled kernel that stores both parts K contiguous (the layout the tensor
cores read 32-bit operands in, transposing a row-major B on the way), and the product
kernel (``ops_heavy.gemm`` with ``low``) loads the parts as it would any operand.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import sympy

from services.generator.lowering import tunables
from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import KernelWriter, Stored, Value, peel_views
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, pow2
from services.generator.lowering.registry import Builder

# (kernel, z, row index, column index, in-range mask) -> the operand tile's variable
TileLoad = Callable[[KernelWriter, Expr, Expr, Expr, str], str]


# Which float32 products multiply operands split once (``split_operands``): measured on an
# H200 over 82 corpus specs (docs/measurements/2026-11-29-float32-products-split-once-h200),
# the split ran 1.1-3.1x faster where a product had a deep K (256 and more) and two waves or
# more of 128 x 128 tiles, and up to 2.2x slower on shallow ones (K 64-192: the split's extra
# operand traffic and per-tile cost over few K steps) and on grids of one wave or less (16-256
# tiles). Those keep Triton's tf32x3, which splits each tile as it is loaded.
SPLIT_MIN_MACS = 1 << 30
SPLIT_MIN_K = 256
SPLIT_MIN_TILES = 300  # of 128 x 128 outputs: two waves on a GPU of 132 SMs
# Rows and columns of each product at least one tile's: a batch of 16- or 32-row products (a
# multi-head attention's projections, lowered per head) ran 1.7-2.2x slower split, most of
# every tile empty.
SPLIT_MIN_ROWS = 128


def splits(mul_type: str, batch: int, m: int, n: int, kdim: int) -> bool:
    """Whether a product multiplies operands split once (float32 at float32 accuracy, large)."""
    if mul_type != "float32" or tunables.current().dot_float32() != "tf32x3":
        return False
    tiles = batch * math.ceil(m / 128) * math.ceil(n / 128)
    return (batch * m * n * kdim >= SPLIT_MIN_MACS and kdim >= SPLIT_MIN_K and tiles >= SPLIT_MIN_TILES
            and min(m, n) >= SPLIT_MIN_ROWS)


def split_operands(b: Builder, a: Value, bm: Value, batch: int, m: int, n: int, kdim: int,
                   a_index: Callable[[Expr, Expr, Expr], list[Expr]],
                   b_index: Callable[[Expr, Expr, Expr], list[Expr]]
                   ) -> tuple[tuple[Stored, Stored], tuple[Stored, Stored]] | None:
    """A float32 product's operands stored once as TF32 high parts and float32 low parts
    (``x = high + low`` exactly; the product is high*high + high*low + low*high, to float32
    accuracy), A as [batch, m, k] and B as [batch, n, k]: K contiguous in both, the layout
    the tensor cores read 32-bit operands in.

    Triton's ``tf32x3`` splits every tile at every K step instead, in registers, and writes
    B's parts back to shared memory: on an H200 (2026-11-29) a 6144^3 product ran 9.04 ms
    that way, as fast as cuBLAS's float32 GEMM (9.07 ms), and 5.19 ms (1.75x) with operands
    split once, the split included. None where storing the parts would repeat an operand
    (a broadcast batch) more than twice over, or would need 64-bit offsets."""
    a_size, b_size = batch * m * kdim, batch * n * kdim
    # What the operands hold, not their broadcast views' sizes: a weight expanded over a batch
    # would be stored once per batch entry.
    held = peel_views(a)[0].numel, peel_views(bm)[0].numel
    if a_size > 2 * held[0] or b_size > 2 * held[1] or max(a_size, b_size) >= 2**31:
        return None

    def load_a(k: KernelWriter, z: Expr, i: Expr, kk: Expr, mask: str) -> str:
        return a.load(k, a_index(z, i, kk), mask)

    def load_b(k: KernelWriter, z: Expr, j: Expr, kk: Expr, mask: str) -> str:
        return bm.load(k, b_index(z, kk, j), mask)

    return _split(b, load_a, batch, m, kdim), _split(b, load_b, batch, n, kdim)


def _split(b: Builder, load: TileLoad, batch: int, rows: int, kdim: int) -> tuple[Stored, Stored]:
    """One kernel storing ``load``'s [batch, rows, kdim] operand as its high and low parts,
    K contiguous, in tiles: an operand whose rows are contiguous instead (a row-major B) is
    transposed through the tile (a flat copy read it a row apart from lane to lane)."""
    shape = (batch, rows, kdim) if batch > 1 else (rows, kdim)
    high, low = b.new_buffer(shape, "float32", "high"), b.new_buffer(shape, "float32", "low")
    name = b.kernel_name("split")
    k = KernelWriter(name)
    br, bc = k.constexpr("BLOCK_R"), k.constexpr("BLOCK_C")
    k.line("pid_r = tl.program_id(0)")
    k.line("pid_c = tl.program_id(1)")
    k.line("pid_z = tl.program_id(2)")
    z = range_symbol(f"z_{name}", batch) if batch > 1 else sympy.Integer(0)
    r, c = range_symbol(f"r_{name}", rows), range_symbol(f"c_{name}", kdim)
    k.names.update({r: "rr", c: "rc"})
    if batch > 1:
        k.names[z] = "pid_z"
    k.line(f"rr = pid_r * {br} + tl.arange(0, {br})[:, None]")
    k.line(f"rc = pid_c * {bc} + tl.arange(0, {bc})[None, :]")
    k.line(f"mask = (rr < {rows}) & (rc < {kdim})")
    x = k.cast(load(k, z, r, c, "mask"), "float32")
    # TF32 keeps float32's sign, exponent and top 10 mantissa bits; the rest is exact in float32.
    top = k.var(f"({x}.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)", "float32")
    offset = f"pid_z * {rows * kdim} + rr * {kdim} + rc"
    k.line(f"tl.store({k.pointer(high)} + {offset}, {top}, mask=mask)")
    k.line(f"tl.store({k.pointer(low)} + {offset}, {x} - {top}, mask=mask)")
    def launch(blocks: dict[str, int], warps: int) -> LaunchShape:
        return LaunchShape((math.ceil(rows / blocks["BLOCK_R"]), math.ceil(kdim / blocks["BLOCK_C"]), batch),
                           blocks, warps)

    b.emit(Kernel(k, kernel_args(k), launch({"BLOCK_R": 64, "BLOCK_C": 64}, 4),
                  launch({"BLOCK_R": min(256, pow2(rows)), "BLOCK_C": min(256, pow2(kdim))}, 1), [high, low]))
    return Stored(high), Stored(low)


__all__ = ["SPLIT_MIN_K", "SPLIT_MIN_MACS", "SPLIT_MIN_ROWS", "SPLIT_MIN_TILES", "TileLoad", "split_operands", "splits"]
