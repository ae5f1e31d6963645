"""Recurrent layers (``nn.RNN``, ``nn.GRU``, ``nn.LSTM``): multi-layer, bidirectional, with
the outputs and the final states PyTorch returns.

Per layer and direction: one matrix product projects the whole input sequence at once
(``x W_ih^T + b_ih`` for every step), then one kernel runs every time step: its programs
split the state's (batch x hidden) tiles, each computes its tiles' recurrent product and
gates, and all wait at a grid-wide barrier before the next step. One launch a layer, where
a loop on the host would launch two kernels a step and spend its time launching them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr
from services.generator.lowering.ir import KernelWriter, Stored, Unsupported, Value, view
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, pow2, tl_type
from services.generator.lowering.ops_heavy import dot_precision, matmul
from services.generator.lowering.ops_views import concat
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


# A layer's time loop runs inside one kernel whose programs share the steps: each owns
# tiles of (batch rows x hidden units) for all gates, and all meet at a grid-wide barrier
# after every step, because the next step reads every hidden unit. The barrier spins, so
# every program must be resident at once: the grid stays at or under MAX_PROGRAMS, fewer
# than the streaming multiprocessors of the GPUs Triton serves, and a program loops over
# its share of tiles where there are more.
MAX_PROGRAMS = 64


def gpu_launch(batch: int, hidden: int) -> LaunchShape:
    """The GPU launch, from a sweep on an H200 (docs/measurements, 2026-11-29): tiles of 16
    batch rows x 32 hidden units, the state read 64 columns at a time, four warps. Wider
    tiles and eight warps were slower on every shape swept: a step is a chain of latencies
    (the state's loads, the barrier), and more programs shorten each one's part of it."""
    bm, bh = 16, min(32, max(16, pow2(hidden)))
    programs = min(math.ceil(batch / bm) * math.ceil(hidden / bh), MAX_PROGRAMS)
    return LaunchShape((programs,), {"BM": bm, "BH": bh, "BK": 64, "NPROG": programs}, 4)


def _sequence_kernel(b: Builder, kind: str, xw: Stored, w_hh: Stored, b_hh: Stored | None, h: Stored,
                     c: Stored | None, out: Stored, seq: int, reverse: bool, out_offset: int) -> Kernel:
    """All time steps of one layer and direction: reads the input projection ``xw``
    ([T*B, G*H], float32), carries the state in float32 scratch, writes each step's output
    columns and leaves the final states in ``h`` (and ``c``)."""
    batch, hidden = h.shape
    gates = GATES[kind]
    width, out_width = gates * hidden, out.shape[2]
    k = KernelWriter(b.kernel_name(f"{kind}_seq"))
    hs = b.new_buffer((2, batch, hidden), "float32", "h_steps")   # the state, two steps
    cs = b.new_buffer((batch, hidden), "float32", "c_step") if c is not None else None
    arrived = b.new_buffer((1,), "int32", "arrived", zeroed=True)
    xw_p, w_p, h_p, hs_p, out_p, cnt_p = (k.pointer(v) for v in (xw.buffer, w_hh.buffer, h.buffer, hs, out.buffer,
                                                                     arrived))
    bias_p = k.pointer(b_hh.buffer) if b_hh is not None else ""
    c_p, cs_p = (k.pointer(c.buffer), k.pointer(cs)) if c is not None and cs is not None else ("", "")
    bm, bh, bk, nprog = (k.constexpr(n) for n in ("BM", "BH", "BK", "NPROG"))
    tiles_h = f"tl.cdiv({hidden}, {bh})"
    per_program = f"tl.cdiv(tl.cdiv({batch}, {bm}) * {tiles_h}, {nprog})"
    k.helpers.add("_kv_tanh")
    k.line("pid = tl.program_id(0)")

    def tile_loop() -> Any:
        # Tiles past the last fall outside the tensor and are masked off.
        return k.block(f"for n in range(0, {per_program}):")

    def tile_index() -> None:
        k.line(f"tile = pid + n * {nprog}")
        k.line(f"rb = (tile // {tiles_h}) * {bm} + tl.arange(0, {bm})")
        k.line(f"rj = (tile % {tiles_h}) * {bh} + tl.arange(0, {bh})")
        k.line(f"m2 = (rb < {batch})[:, None] & (rj < {hidden})[None, :]")
        k.line(f"o2 = rb[:, None] * {hidden} + rj[None, :]")

    def barrier(target: str) -> None:
        # Every thread's stores are ordered before one thread's release of the count; the
        # acquire that sees all arrivals orders them before the next step's loads.
        # The wait polls with plain (volatile) loads, which do not queue at the counter behind
        # every other program's atomics; one acquire after it orders what follows.
        k.line("tl.debug_barrier()")
        k.line(f'tl.atomic_add({cnt_p}, 1, sem="release", scope="gpu")')
        with k.block(f"while tl.load({cnt_p}, volatile=True) < {target}:"):
            k.line("pass")
        k.line(f'tl.atomic_add({cnt_p}, 0, sem="acquire", scope="gpu")')
        k.line("tl.debug_barrier()")

    with tile_loop():
        tile_index()
        k.line(f"tl.store({hs_p} + o2, tl.load({h_p} + o2, mask=m2, other=0).to(tl.float32), mask=m2)")
        if c is not None:
            k.line(f"tl.store({cs_p} + o2, tl.load({c_p} + o2, mask=m2, other=0).to(tl.float32), mask=m2)")
    barrier(nprog)
    with k.block(f"for s in range(0, {seq}):"):
        k.line(f"t = {seq - 1} - s" if reverse else "t = s")
        k.line(f"src = {hs_p} + (s % 2) * {batch * hidden}")
        k.line(f"dst = {hs_p} + ((s + 1) % 2) * {batch * hidden}")
        with tile_loop():
            tile_index()
            # What does not depend on the other programs' state is loaded first, so its
            # latency overlaps the state's loads instead of following the product.
            k.line(f"row = t * {batch} + rb")
            for g in range(gates):
                k.line(f"x{g} = tl.load({xw_p} + row[:, None] * {width} + {g * hidden} + rj[None, :], mask=m2, other=0)")
                init = f"tl.zeros(({bm}, {bh}), dtype=tl.float32)"
                if bias_p:
                    init += (f" + tl.load({bias_p} + {g * hidden} + rj, mask=rj < {hidden}, other=0)"
                             f".to(tl.float32)[None, :]")
                k.line(f"acc{g} = {init}")
            if kind == "lstm":
                k.line(f"c_prev = tl.load({cs_p} + o2, mask=m2, other=0)")
            elif kind == "gru":
                k.line("h_prev = tl.load(src + o2, mask=m2, other=0, cache_modifier='.cg')")
            with k.block(f"for k0 in range(0, {hidden}, {bk}):"):
                k.line(f"rk = k0 + tl.arange(0, {bk})")
                # .cg: the state was written by other programs; read it from L2, not L1.
                k.line(f"a = tl.load(src + rb[:, None] * {hidden} + rk[None, :], "
                       f"mask=(rb < {batch})[:, None] & (rk < {hidden})[None, :], other=0, cache_modifier='.cg')")
                for g in range(gates):
                    k.line(f"w = tl.load({w_p} + ({g * hidden} + rj[None, :]) * {hidden} + rk[:, None], "
                           f"mask=(rk < {hidden})[:, None] & (rj < {hidden})[None, :], other=0).to(tl.float32)")
                    k.line(f"acc{g} += tl.dot(a, w{dot_precision('float32')})")
            if kind == "lstm":
                k.line("c_new = tl.sigmoid(x1 + acc1) * c_prev + tl.sigmoid(x0 + acc0) * _kv_tanh(x2 + acc2)")
                k.line("h_new = tl.sigmoid(x3 + acc3) * _kv_tanh(c_new)")
                k.line(f"tl.store({cs_p} + o2, c_new, mask=m2)")
            elif kind == "gru":
                k.line("r = tl.sigmoid(x0 + acc0)")
                k.line("z = tl.sigmoid(x1 + acc1)")
                k.line("h_new = (1.0 - z) * _kv_tanh(x2 + r * acc2) + z * h_prev")
            else:
                k.line("h_new = _kv_tanh(x0 + acc0)" if kind == "rnn_tanh" else "h_new = tl.maximum(x0 + acc0, 0.0)")
            k.line("tl.store(dst + o2, h_new, mask=m2)")
            k.line(f"tl.store({out_p} + row[:, None] * {out_width} + {out_offset} + rj[None, :], "
                   f"h_new.to({tl_type(out.dtype)}), mask=m2)")
        barrier(f"(s + 2) * {nprog}")
    with tile_loop():
        tile_index()
        k.line(f"tl.store({h_p} + o2, tl.load({hs_p} + {seq % 2 * batch * hidden} + o2, mask=m2, other=0)"
               f".to({tl_type(h.dtype)}), mask=m2)")
        if c is not None and cs is not None:
            k.line(f"tl.store({c_p} + o2, tl.load({cs_p} + o2, mask=m2, other=0).to({tl_type(c.dtype)}), mask=m2)")
    # The interpreter runs one program over every tile: its barrier never waits.
    cm, ch = max(16, pow2(batch)), max(16, min(128, pow2(hidden)))
    return Kernel(k, kernel_args(k), gpu_launch(batch, hidden),
                  LaunchShape((1,), {"BM": cm, "BH": ch, "BK": max(16, min(64, pow2(hidden))), "NPROG": 1}, 1))


def _weight_t(w: Value) -> Any:
    """``b`` operand reading ``w`` transposed: element (k, j) of W^T is w[j, k]."""
    return lambda z, kk, j: [j, kk]


def _bias_epilogue(bias: Value | None) -> Any:
    if bias is None:
        return None

    def epilogue(k: KernelWriter, idx: list[Expr], acc: str, mask: str) -> str:
        return k.var(f"{acc} + {k.cast(bias.load(k, [idx[2]], mask), 'float32')}", "float32")

    return epilogue


@lowers("aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input")
def recurrent(b: Builder, node: Node, args: list[Any], kwargs: dict[str, Any]) -> list[Value]:
    kind = node.target.split(".")[1]
    x, hx, params = args[0], args[1], list(args[2])
    has_biases, layers, _dropout, train, bidirectional, batch_first = args[3:9]
    if train and _dropout:
        raise Unsupported(f"{kind} with dropout in training mode draws random numbers")
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != layers * dirs * per:
        raise Unsupported(f"{kind} with projections (proj_size) or an unexpected parameter layout")
    seq, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    gates = GATES[kind]
    hidden = params[1].shape[1]
    dtype = node.outputs[0].dtype if node.outputs[0] else x.dtype
    # The input as [T, B, I], whatever its layout.
    layer_in: Value = view(x, (seq, batch, x.shape[2]), lambda i: [i[1], i[0], i[2]]) if batch_first else x
    h_final: list[Value] = []
    c_final: list[Value] = []
    for layer in range(layers):
        out = Stored(b.new_buffer((seq, batch, dirs * hidden), dtype, f"{kind}_out"))
        in_width = layer_in.shape[2]
        source = layer_in if layer == 0 else b.realize(layer_in, "rnn_in")
        for d in range(dirs):
            base = (layer * dirs + d) * per
            w_ih, w_hh = params[base], params[base + 1]
            b_ih, b_hh = (params[base + 2], params[base + 3]) if has_biases else (None, None)
            xw = Stored(b.new_buffer((seq * batch, gates * hidden), "float32", "xw"))

            def rows(z: Expr, i: Expr, kk: Expr) -> list[Expr]:
                # row i of the [T*B, I] view is (step i // B, batch i % B)
                return [_div(i, batch), _mod(i, batch), kk]

            b.emit(matmul(b, b.kernel_name("proj"), source, w_ih, xw.buffer, 1, seq * batch, gates * hidden,
                          in_width, rows, _weight_t(w_ih), _bias_epilogue(b_ih)))
            slot = layer * dirs + d
            # Fresh state buffers (the step kernels overwrite them), never the caller's tensors.
            h = b.realize(_select(states[0], slot), "h")
            c = b.realize(_select(states[1], slot), "c") if kind == "lstm" else None
            b.emit(_sequence_kernel(b, kind, xw, b.realize(w_hh), b.realize(b_hh) if b_hh is not None else None,
                                    h, c, out, seq, d == 1, d * hidden))
            h_final.append(h)
            if c is not None:
                c_final.append(c)
        layer_in = out
    output: Value = out
    if batch_first:
        output = view(out, (batch, seq, dirs * hidden), lambda i: [i[1], i[0], i[2]])
    results = [output, _stack(h_final, dtype)]
    if kind == "lstm":
        results.append(_stack(c_final, dtype))
    return results


def _div(i: Expr, n: int) -> Expr:
    from services.generator.lowering.indexing import FloorDiv

    return FloorDiv(i, n)


def _mod(i: Expr, n: int) -> Expr:
    from services.generator.lowering.indexing import ModularIndexing

    return ModularIndexing(i, 1, n)


def _select(states: Value, slot: int) -> Value:
    """State ``slot`` ([B, H]) of an initial-state tensor [L*D, B, H]."""
    return view(states, states.shape[1:], lambda i: [sympy.Integer(slot), *i])


def _stack(states: Sequence[Value], dtype: str) -> Value:
    parts = [view(s, (1, *s.shape), lambda i: list(i[1:])) for s in states]
    shape = (len(states), *states[0].shape)
    return concat(parts, 0, shape, dtype)


