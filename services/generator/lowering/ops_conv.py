"""Convolutions: ``aten.convolution`` (``nn.Conv1d/2d/3d``, ``nn.ConvTranspose1d/2d/3d``,
``F.conv*``) of any spatial rank, stride, padding, dilation, groups and output padding.

A convolution is a matrix product whose A operand is gathered from the input (an implicit
GEMM): per group, M = batch * output positions, N = output channels of the group, K = input
channels of the group * kernel volume. Row m and column k name an output position and a
(channel, kernel offset) pair; the input position they read is computed in the kernel, and
positions in the zero padding are masked to 0. For a transposed convolution, output position
o reads input position (o + pad - k * dilation) / stride where that division is exact and
the result lies inside the input; with a stride and no dilation the outputs are split by
phase (o mod stride), each phase a GEMM over only the kernel taps it receives.

Groups with few output channels and few taps (depthwise convolutions above all) would waste
most of a ``tl.dot`` tile, whose dimensions are at least 16; those are written directly
instead, in one of two forms: a reduction (each program takes a block of output elements and
sums over a block of their (channel, kernel offset) taps at once) or a walk (each GPU lane owns
an output element and walks its taps one at a time, unrolled when they are few, so neighbouring
lanes read neighbouring input elements at every step). A strided transposed convolution's
direct forms visit only the taps its output's phase receives. Few output channels over many
taps still take the GEMM, unless phased: one tile then covers every output channel, so each
input element is gathered once rather than once per output channel. The tunable
``CONV_FORM`` overrides the choice.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from services.generator.lowering import tunables
from services.generator.lowering.indexing import Expr, FloorDiv, ModularIndexing, bounds, delinearize, linear
from services.generator.lowering.ir import Buffer, KernelWriter, Lazy, Stored, Unsupported, Value, and_masks
from services.generator.lowering.kernels import Kernel, LaunchShape, ReductionSpec, pow2, reduction_kernel
from services.generator.lowering.ops_heavy import (FusedHost, GemmBlocks, TileEpilogue, TileLoad, TileStore, dot_type,
                                                  gemm, interpreter_blocks, operand, tuned)
from services.generator.lowering.ops_pointwise import out_meta
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

# The implicit GEMM needs at least this many output channels per group and this much K to
# fill a tl.dot tile; smaller convolutions take the direct form...
GEMM_MIN_N = 16
GEMM_MIN_K = 16
# ...unless they have at least this many output channels and taps: the GEMM's tile then
# gathers each input element once for all output channels.
FEW_CHANNELS_GEMM_MIN_N = 2
FEW_CHANNELS_GEMM_MIN_K = 64
# A convolution with this many output channels per group and taps is a GEMM whatever the
# search asks: its direct forms only spend the search's candidates (on an H200, 2026-11-28, a
# transposed 3x3 convolution of 128 to 64 channels ran 40.7 ms as a reduction, 1.59 as a GEMM).
GEMM_ONLY_MIN_N = 32
GEMM_ONLY_MIN_K = 256
# The most taps a walking lane's loop is unrolled over.
WALK_UNROLL_MAX = 64
# Output channels per group from which the interpreter runs the GEMM form of a direct one.
INTERPRETER_GEMM_MIN_N = 4


@dataclass(frozen=True)
class ConvGeometry:
    """Sizes of one convolution, spatial tuples in dimension order."""

    batch: int
    cin: int
    cout: int
    groups: int
    in_size: tuple[int, ...]
    out_size: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    # K walked tap by tap (``tap_major``): the weight read is then reordered to
    # [groups, *kernel, in channels per group, out channels per group].
    tap_major: bool = False

    @property
    def cin_g(self) -> int:
        return self.cin // self.groups

    @property
    def cout_g(self) -> int:
        return self.cout // self.groups

    @property
    def kvol(self) -> int:
        return math.prod(self.kernel)

    @property
    def out_positions(self) -> int:
        return math.prod(self.out_size)

    @property
    def phased(self) -> bool:
        """A strided transposed convolution without dilation: each output receives only the
        kernel offsets of its phase (output position mod stride)."""
        return self.transposed and max(self.stride) > 1 and set(self.dilation) == {1}

    @property
    def taps(self) -> tuple[int, ...]:
        """Kernel offsets per dimension that one output receives (all of them unless phased)."""
        if not self.phased:
            return self.kernel
        return tuple(-(-kk // s) for kk, s in zip(self.kernel, self.stride, strict=True))

    def phase_input(self, k: KernelWriter, outs: Sequence[Expr],
                    j: Sequence[Expr]) -> tuple[list[Expr], list[Expr], str | None]:
        """For a phased convolution: the input position and kernel offset of output ``outs``'s
        ``j``-th tap, and the condition (code) that the offset lies inside the kernel and the
        position inside the input (None when the sizes guarantee both). Output o receives
        kernel offset kk = (o + p) mod s + s * j from input position (o + p) // s - j."""
        conds: list[str] = []
        pos: list[Expr] = []
        offsets: list[Expr] = []
        for d, (o, jd) in enumerate(zip(outs, j, strict=True)):
            s, p = self.stride[d], self.padding[d]
            kk = ModularIndexing(o + p, 1, s) + s * jd
            at = FloorDiv(o + p, s) - jd
            if bounds(kk)[1] >= self.kernel[d]:
                conds.append(f"({k.index(kk)} < {self.kernel[d]})")
            conds += _within(k, at, self.in_size[d])
            pos.append(at)
            offsets.append(kk)
        return pos, offsets, k.var(" & ".join(conds), "bool") if conds else None

    def input_at(self, k: KernelWriter, outs: Sequence[Expr],
                 offsets: Sequence[Expr]) -> tuple[list[Expr], str | None]:
        """The input position read for output position ``outs`` and kernel offset ``offsets``,
        and the condition (code) under which it lies inside the input; None when it always
        does (no padding on that side, the sizes guarantee it)."""
        conds: list[str] = []
        pos: list[Expr] = []
        for d, (o, kk) in enumerate(zip(outs, offsets, strict=True)):
            size, s, p, dil = self.in_size[d], self.stride[d], self.padding[d], self.dilation[d]
            if not self.transposed:
                at = o * s - p + kk * dil
                conds += _within(k, at, size)
                pos.append(at)
                continue
            # Transposed: output o receives input i when i * s - p + kk * dil == o.
            t = o + p - kk * dil
            lo, hi = bounds(t)
            if lo < 0:
                conds.append(f"({k.index(t)} >= 0)")
            if s > 1:
                conds.append(f"({k.index(ModularIndexing(t, 1, s))} == 0)")
            if hi >= size * s:
                conds.append(f"({k.index(t)} < {size * s})")
            # Where the conditions hold t >= 0, so the kernel's truncating division floors.
            pos.append(FloorDiv(t, s) if s > 1 else t)
        if not conds:
            return pos, None
        return pos, k.var(" & ".join(conds), "bool")


def _within(k: KernelWriter, at: Expr, size: int) -> list[str]:
    """The conditions (code) that index ``at`` lies in [0, size): only the sides its bounds
    can pass."""
    lo, hi = bounds(at)
    return ([f"({k.index(at)} >= 0)"] if lo < 0 else []) + ([f"({k.index(at)} < {size})"] if hi >= size else [])


def _ints(value: Any, rank: int) -> tuple[int, ...]:
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return tuple(values * rank if len(values) == 1 else values)


def _input_value(k: KernelWriter, x: Value, geo: ConvGeometry, n: Expr, channel: Expr, outs: Sequence[Expr],
                 offsets: Sequence[Expr], mask: str | None) -> str:
    """The input element a (output position, channel, kernel offset) reads, 0 in the padding.

    The input may be a lazy value whose computation does not give 0 at a masked lane (a
    normalization's shift), so padding is written as an explicit 0, not left to the load."""
    pos, inside = geo.input_at(k, outs, offsets)
    work = "float64" if x.dtype == "float64" else "float32"
    v = k.cast(x.load(k, [n, channel, *pos], and_masks(mask, inside)), work)
    if inside is None or isinstance(x, Stored):
        return v  # a buffer's masked load is 0 there already (and a 16-bit tile goes in as loaded)
    return k.var(f"tl.where({inside}, {v}, 0.0)", work)


@lowers("aten.convolution.default")
def convolution(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> Value:
    x, w, bias = args[0], args[1], args[2]
    stride, padding, dilation, transposed, _output_padding, groups = args[3:9]
    shape, dtype = out_meta(node)
    rank = len(w.shape) - 2
    if len(x.shape) != rank + 2:
        raise Unsupported(f"convolution of a {len(x.shape)}-d input with a {len(w.shape)}-d weight")
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        raise Unsupported(f"convolution of {dtype} tensors")
    groups = int(groups)
    transposed = bool(transposed)
    cout = int(shape[1])
    geo = ConvGeometry(batch=int(x.shape[0]), cin=int(x.shape[1]), cout=cout, groups=groups,
                       in_size=tuple(int(s) for s in x.shape[2:]), out_size=tuple(int(s) for s in shape[2:]),
                       kernel=tuple(int(s) for s in w.shape[2:]), stride=_ints(stride, rank),
                       padding=_ints(padding, rank), dilation=_ints(dilation, rank), transposed=transposed)
    if math.prod(int(s) for s in shape) == 0:
        return Stored(b.new_buffer(tuple(shape), dtype, "conv"))
    if geo.batch * geo.cin == 0 or geo.kvol == 0:
        raise Unsupported("convolution over an empty input or kernel")
    # Every input element is read once per kernel offset and per tile of output channels:
    # a computed input is stored once rather than recomputed at each read.
    x, w = operand(b, x), operand(b, w)
    bias = bias if isinstance(bias, Value) else None
    gemm_form = _subpixel_gemm if geo.phased else _implicit_gemm
    form = _form(geo)
    if form == "gemm":
        if _walks_taps(geo):
            w = _tap_major_weight(b, geo, w)
            geo = dataclasses.replace(geo, tap_major=True)
        # Computed where it is stored: a pointwise epilogue (bias, activation, residual) runs
        # in the convolution's own kernel.
        return ConvValue(b, geo, x, w, bias, tuple(shape), dtype, gemm_form)
    out = b.new_buffer(tuple(shape), dtype, "conv")
    kernel = _direct(b, geo, x, w, bias, out, walk=form == "walk")
    if geo.cout_g >= INTERPRETER_GEMM_MIN_N:
        # Under the interpreter the GEMM form computes each input position once per tile of
        # output channels, the direct form once per output channel, and a strided transposed
        # one skips the taps no output receives: a grouped transposed 3-d convolution with 4
        # channels per group screened in a fraction of the direct form's time.
        alternative = gemm_form(b, geo, x, w, bias, out, b.kernel_name("conv"))
        if [id(a) for a in alternative.args] == [id(a) for a in kernel.args]:
            kernel.interpreter, kernel.cpu = alternative.interpreter or alternative.writer, alternative.cpu
    b.emit(kernel)
    return Stored(out)


def _form(geo: ConvGeometry) -> str:
    """"gemm", "walk" or "reduce": the search's choice, else by the channels and taps a GEMM
    tile finds, the stride and the taps' count.

    Measured on an H100 (docs/measurements/2026-11-27-row-fusion-and-conv-forms): the GEMM
    ran 1.3-3.5x faster than either direct form with 4-8 output channels per group over 64-256
    taps, but 2.3x slower than them on a phased convolution to 3 channels (each phase's GEMM
    re-gathers the whole input and writes every other output). Of the direct forms, the walk
    ran 1.2-2.8x faster on depthwise convolutions of stride 1 (3 to 27 taps); the reduction
    1.4x faster at stride 2, and on a phased convolution over 256 taps."""
    chosen = tunables.current().conv_form
    taps = geo.cin_g * geo.kvol
    if chosen != "auto" and not (geo.cout_g >= GEMM_ONLY_MIN_N and taps >= GEMM_ONLY_MIN_K):
        return chosen
    if geo.cout_g >= GEMM_MIN_N and taps >= GEMM_MIN_K:
        return "gemm"
    if geo.cout_g >= FEW_CHANNELS_GEMM_MIN_N and taps >= FEW_CHANNELS_GEMM_MIN_K and not geo.phased:
        return "gemm"
    if set(geo.stride) == {1} and math.prod([geo.cin_g, *geo.taps]) <= WALK_UNROLL_MAX:
        return "walk"
    return "reduce"


def _walks_taps(geo: ConvGeometry) -> bool:
    """Whether the GEMM walks K tap by tap: several taps, and whole steps of channels (16,
    the smallest K step) within each. Not a plain 1-d convolution: its tap is one division
    per element, and its channel-major steps read overlapping windows (measured on an H100,
    docs/measurements/2026-11-28-one-walk-variance-and-tap-major-convolutions: a 5-tap 1-d
    convolution ran 0.79x as fast tap by tap; 2-d, 3-d and transposed ones 1.35-3.7x faster)."""
    taps = math.prod(geo.taps)
    if len(geo.kernel) == 1 and not geo.transposed:
        return False
    return tunables.current().conv_k_order == "taps" and taps > 1 and geo.cin_g % 16 == 0


def _tap_major_weight(b: Builder, geo: ConvGeometry, w: Value) -> Stored:
    """The weight stored as [groups, *kernel, in channels per group, out channels per group]:
    one tap's weights for a K step are then a contiguous [channels, out channels] tile
    (in the spec's layout its elements lie a kernel volume or more apart)."""
    shape = (geo.groups, *geo.kernel, geo.cin_g, geo.cout_g)

    def load(k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        group, *offsets, c, j = index
        return w.load(k, _weight_index(geo, group, c, j, offsets), mask)

    return b.realize(Lazy(shape, w.dtype, load, w.cost), "weight_taps")


def _weight_index(geo: ConvGeometry, group: Expr, c: Expr, j: Expr, offsets: Sequence[Expr]) -> list[Expr]:
    """The weight element joining input channel ``c`` and output channel ``j`` of ``group``
    (both counted inside the group) at kernel offset ``offsets``."""
    if geo.tap_major:  # reordered: [groups, *kernel, in channels per group, out channels per group]
        return [group, *offsets, c, j]
    if geo.transposed:  # [in channels, out channels per group, *kernel]
        return [group * geo.cin_g + c, j, *offsets]
    return [group * geo.cout_g + j, c, *offsets]  # [out channels, in channels per group, *kernel]


def _implicit_gemm(b: Builder, geo: ConvGeometry, x: Value, w: Value, bias: Value | None,
                   out: Buffer, name: str, tile: TileEpilogue | None = None) -> Kernel:
    m, n, kdim = geo.batch * geo.out_positions, geo.cout_g, geo.cin_g * geo.kvol
    positions = geo.out_positions

    def load_a(k: KernelWriter, z: Expr, mi: Expr, ka: Expr, mask: str) -> str:
        n_, *outs = delinearize(mi, [geo.batch, *geo.out_size])
        c, offsets = _channel_and_taps(geo, ka, geo.kernel)
        return _input_value(k, x, geo, n_, z * geo.cin_g + c, outs, offsets, mask)

    def load_b(k: KernelWriter, z: Expr, kb: Expr, j: Expr, mask: str) -> str:
        if isinstance(w, Stored) and not geo.transposed and not geo.tap_major:
            # The weight's rows are contiguous runs of K: read them at their flat offset.
            return k.load(w.buffer, (z * geo.cout_g + j) * kdim + kb, mask)
        c, offsets = _channel_and_taps(geo, kb, geo.kernel)
        return w.load(k, _weight_index(geo, z, c, j, offsets), mask)

    def store(k: KernelWriter, z: Expr, mi: Expr, j: Expr, acc: str, mask: str) -> None:
        channel = z * geo.cout_g + j
        value = _bias_added(k, bias, channel, acc, mask)
        offset = FloorDiv(mi, positions) * (geo.cout * positions) + channel * positions \
            + ModularIndexing(mi, 1, positions)
        if tile is not None:
            n_, *outs = delinearize(mi, [geo.batch, *geo.out_size])
            value = tile(k, [n_, channel, *outs], value, mask, lambda raw, v: k.store(raw, offset, v, mask))
        k.store(out, offset, value, mask)

    return _launch(b, name, geo.groups, m, n, kdim, load_a, load_b, store, x, w, out, geo)


def _channel_and_taps(geo: ConvGeometry, kk: Expr, taps: Sequence[int]) -> tuple[Expr, list[Expr]]:
    """The input channel (within the group) and per-dimension tap of K index ``kk``: channel
    major in the weight's own order, tap major when the GEMM walks K tap by tap."""
    if geo.tap_major:
        *offsets, c = delinearize(kk, [*taps, geo.cin_g])
        return c, offsets
    c, *offsets = delinearize(kk, [geo.cin_g, *taps])
    return c, offsets


def _launch(b: Builder, name: str, batch: int, m: int, n: int, kdim: int, load_a: TileLoad, load_b: TileLoad,
            store: TileStore, x: Value, w: Value, out: Buffer, geo: ConvGeometry) -> Kernel:
    wide = max(x.numel, w.numel, out.numel) >= 2**31
    mul = dot_type(x.dtype, w.dtype)
    # Measured on an H100 (3x3, 7x7 stride 2, transposed 2x2 stride 2; float32): 128 x 64 x 16
    # tiles ran 1.4-2.4x faster than 64 x 64 x 32. 16-bit products (tensor cores, a deeper K):
    # 64 x 128 x 32 ran 1.19-1.44x faster than 128 x 64 x 32 on three 16-bit convolutions
    # (docs/measurements/2026-11-28-one-walk-variance-and-tap-major-convolutions).
    if mul in ("float32", "float64"):
        gpu = tuned(GemmBlocks(128, max(16, min(64, pow2(n))), 16, 4), mul)
    else:
        gpu = tuned(GemmBlocks(64, max(16, min(128, pow2(n))), 32, 4), mul)
    cpu = interpreter_blocks(m, n, kdim)
    if not geo.tap_major:
        return gemm(name, batch, m, n, kdim, load_a, load_b, store, [out], mul, wide, gpu, cpu)
    while geo.cin_g % gpu.k:  # every K step inside one tap: 16 divides the channels
        gpu = dataclasses.replace(gpu, k=gpu.k // 2)
    return gemm(name, batch, m, n, kdim, load_a, load_b, store, [out], mul, wide, gpu, cpu, k_inner=geo.cin_g)


def _bias_added(k: KernelWriter, bias: Value | None, channel: Expr, acc: str, mask: str) -> str:
    if bias is None:
        return acc
    return k.var(f"{acc} + {k.cast(bias.load(k, [channel], mask), k.dtype(acc))}", k.dtype(acc))


def _subpixel_gemm(b: Builder, geo: ConvGeometry, x: Value, w: Value, bias: Value | None,
                   out: Buffer, name: str, tile: TileEpilogue | None = None) -> Kernel:
    """A strided transposed convolution (dilation 1), one GEMM per output phase.

    Output position o = r + s * q of phase r (per dimension, r < s) receives only the kernel
    offsets k = k0 + s * j with k0 = (r + p) mod s, from input position q - j + (r + p) // s:
    walking those alone skips the s**d - 1 of every s**d products that the masked form
    multiplies by zero. Grid axis 2 runs over (group, phase); rows and taps are sized for the
    largest phase, the rest masked."""
    s_, p_ = geo.stride, geo.padding
    phases = math.prod(s_)
    rows = [-(-o // s) for o, s in zip(geo.out_size, s_, strict=True)]  # q per dimension
    taps = list(geo.taps)  # j per dimension
    m, n, kdim = geo.batch * math.prod(rows), geo.cout_g, geo.cin_g * math.prod(taps)

    def phase(z: Expr) -> tuple[Expr, list[Expr]]:
        group = FloorDiv(z, phases) if geo.groups > 1 else sympy.Integer(0)
        return group, delinearize(ModularIndexing(z, 1, phases) if geo.groups > 1 else z, s_)

    def offsets(r: list[Expr], j: Sequence[Expr]) -> list[Expr]:
        return [ModularIndexing(rd + pd, 1, sd) + sd * jd
                for rd, pd, sd, jd in zip(r, p_, s_, j, strict=True)]

    def real_taps(k: KernelWriter, kk: list[Expr], tile: Expr) -> list[str]:
        """Conditions that the offsets are inside the kernel. An offset of one tap depends on
        the phase alone; it is tied to the K tile, since Triton's interpreter cannot combine
        a scalar condition with a tensor mask."""
        return [f"({k.index(e)}{'' if tile in e.free_symbols else f' + 0 * {k.index(tile)}'} < {size})"
                for e, size in zip(kk, geo.kernel, strict=True) if bounds(e)[1] >= size]

    def load_a(k: KernelWriter, z: Expr, mi: Expr, ka: Expr, mask: str) -> str:
        group, r = phase(z)
        n_, *q = delinearize(mi, [geo.batch, *rows])
        c, j = _channel_and_taps(geo, ka, taps)
        pos = [qd - jd + FloorDiv(rd + pd, sd) for qd, jd, rd, pd, sd in zip(q, j, r, p_, s_, strict=True)]
        conds = real_taps(k, offsets(r, j), ka)
        for e, size in zip(pos, geo.in_size, strict=True):
            conds += _within(k, e, size)
        inside = k.var(" & ".join(conds), "bool") if conds else None
        work = "float64" if x.dtype == "float64" else "float32"
        v = k.cast(x.load(k, [n_, group * geo.cin_g + c, *pos], and_masks(mask, inside)), work)
        return v if inside is None or isinstance(x, Stored) else k.var(f"tl.where({inside}, {v}, 0.0)", work)

    def load_b(k: KernelWriter, z: Expr, kb: Expr, jo: Expr, mask: str) -> str:
        group, r = phase(z)
        c, j = _channel_and_taps(geo, kb, taps)
        kk = offsets(r, j)
        valid = real_taps(k, kk, kb)
        inside = k.var(" & ".join(valid), "bool") if valid else None
        work = "float64" if w.dtype == "float64" else "float32"
        v = k.cast(w.load(k, _weight_index(geo, group, c, jo, kk), and_masks(mask, inside)), work)
        # A computed weight need not be finite at the taps past the kernel: 0 there, not 0 * inf.
        return v if inside is None or isinstance(w, Stored) else k.var(f"tl.where({inside}, {v}, 0.0)", work)

    def store(k: KernelWriter, z: Expr, mi: Expr, jo: Expr, acc: str, mask: str) -> None:
        group, r = phase(z)
        n_, *q = delinearize(mi, [geo.batch, *rows])
        o = [rd + sd * qd for rd, sd, qd in zip(r, s_, q, strict=True)]
        conds = [f"({k.index(e)} < {size})" for e, size in zip(o, geo.out_size, strict=True)
                 if bounds(e)[1] >= size]
        inside = k.var(" & ".join([mask, *conds]), "bool")
        channel = group * geo.cout_g + jo
        offset = linear([n_, channel, *o], out.shape)
        value = _bias_added(k, bias, channel, acc, inside)
        if tile is not None:
            value = tile(k, [n_, channel, *o], value, inside, lambda raw, v: k.store(raw, offset, v, inside))
        k.store(out, offset, value, inside)

    return _launch(b, name, geo.groups * phases, m, n, kdim, load_a, load_b, store, x, w, out, geo)


def _direct(b: Builder, geo: ConvGeometry, x: Value, w: Value, bias: Value | None, out: Buffer,
            walk: bool) -> Kernel:
    """Each output element summed over (input channel of its group, kernel offset); a phased
    convolution's over the taps of its phase alone. ``walk``: on the GPU each lane owns one
    output and walks its taps (see the module's docstring)."""
    acc = "float64" if "float64" in (x.dtype, w.dtype) else "float32"
    seen: dict[str, list[Expr]] = {}

    def read(k: KernelWriter, xs: list[Expr], rs: list[Expr], mask: str) -> str:
        seen["xs"] = xs
        n_, co, *outs = xs
        c, *taps = rs
        group = FloorDiv(co, geo.cout_g) if geo.groups > 1 else sympy.Integer(0)
        j = ModularIndexing(co, 1, geo.cout_g) if geo.groups > 1 else co
        if not geo.phased:
            xv = _input_value(k, x, geo, n_, group * geo.cin_g + c, outs, taps, mask)
            wv = k.cast(w.load(k, _weight_index(geo, group, c, j, taps), mask), acc)
            return k.var(f"{xv} * {wv}", acc)
        pos, offsets, inside = geo.phase_input(k, outs, taps)
        valid = and_masks(mask, inside) or mask
        xv = k.cast(x.load(k, [n_, group * geo.cin_g + c, *pos], valid), acc)
        wv = k.cast(w.load(k, _weight_index(geo, group, c, j, offsets), valid), acc)
        # Written as an explicit 0 where the tap is not received: a computed operand need not
        # be 0 (or finite) there.
        return k.var(f"tl.where({valid}, {xv} * {wv}, 0.0)", acc)

    def finish(k: KernelWriter, a: str) -> str:
        total = k.var(f"tl.sum({a}, 1)[:, None]", acc)
        if bias is None:
            return total
        # The channel index is reduced modulo the channel count, so every lane (even past
        # the last output) reads a valid bias element: no mask needed.
        bv = k.cast(bias.load(k, [seen["xs"][1]], None), acc)
        return k.var(f"{total} + {bv}", acc)

    spec = ReductionSpec("0", lambda k, a, v: f"{a} + {v}", finish, acc)
    reduced = [geo.cin_g, *geo.taps]
    if not walk:
        return reduction_kernel(b.kernel_name("conv"), out, list(out.shape), reduced, read, spec)
    # Each lane walks its taps one at a time (RBLOCK 1): the lanes of a warp then hold
    # neighbouring outputs and read neighbouring inputs at each step, where lanes spread over
    # the taps of a few outputs read addresses a channel or a row apart. Few taps are unrolled,
    # so their loads are issued together rather than one loop step at a time.
    kernel = reduction_kernel(b.kernel_name("conv"), out, list(out.shape), reduced, read, spec,
                              unroll=math.prod(reduced) <= WALK_UNROLL_MAX)
    # A quarter of a pointwise kernel's block: each lane then walks 2 outputs (4 warps), which
    # ran 1.1-1.4x faster than 8 on stride-1 depthwise convolutions.
    block = min(max(32, tunables.current().pointwise_block // 4), pow2(out.numel))
    kernel.gpu = LaunchShape((-(-out.numel // block),), {"XBLOCK": block, "RBLOCK": 1}, tunables.current().num_warps)
    return kernel


class ConvValue(FusedHost):
    """An implicit-GEMM convolution's result (see ``FusedHost``): a pointwise value reading it
    element for element (a bias, ReLU, batch norm in eval mode, a residual add) is computed
    in the convolution's kernel before its one store."""

    kind = "conv"

    def __init__(self, b: Builder, geo: ConvGeometry, x: Value, w: Value, bias: Value | None,
                 shape: tuple[int, ...], dtype: str, form: Any) -> None:
        super().__init__(b, shape, dtype)
        self.geo, self.x, self.w, self.bias, self.form = geo, x, w, bias, form

    def _kernel(self, name: str, out: Buffer, tile: TileEpilogue | None) -> Kernel:
        return self.form(self.builder, self.geo, self.x, self.w, self.bias, out, name, tile)


__all__ = ["ConvGeometry", "ConvValue", "convolution"]
