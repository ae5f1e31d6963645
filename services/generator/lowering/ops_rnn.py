"""Recurrent layers (``nn.RNN``, ``nn.GRU``, ``nn.LSTM``): multi-layer, bidirectional, with
the outputs and the final states PyTorch returns.

Per layer and direction: one matrix product projects the whole input sequence at once
(``x W_ih^T + b_ih`` for every step), then the time loop runs on the host over two
kernels launched once per step: the recurrent product ``h W_hh^T + b_hh`` and a fused gate
kernel that updates the state and writes the step's output. Both kernels read the step
as an argument, so each is compiled once however long the sequence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sympy

from services.generator.lowering.indexing import Expr
from services.generator.lowering.ir import HostValue, KernelWriter, Stored, Unsupported, Value, view
from services.generator.lowering.kernels import Kernel, LaunchShape, kernel_args, pow2
from services.generator.lowering.ops_heavy import matmul
from services.generator.lowering.ops_views import concat
from services.generator.lowering.registry import Builder, lowers
from services.generator.lowering.schema import Node

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _step_kernel(b: Builder, kind: str, xw: Stored, gh: Stored, h: Stored, c: Stored | None, out: Stored,
                 step: HostValue, batch: int, hidden: int, out_width: int, out_offset: int) -> Kernel:
    """The gates of one time step: reads the step's input projection and the recurrent
    product, updates ``h`` (and ``c``) in place and writes the step's output columns."""
    k = KernelWriter(b.kernel_name(f"{kind}_step"))
    gates = GATES[kind]
    width = gates * hidden
    block = k.constexpr("BLOCK")
    t = k.scalar(step)
    xw_p, gh_p, h_p, out_p = (k.pointer(v.buffer) for v in (xw, gh, h, out))
    c_p = k.pointer(c.buffer) if c is not None else ""
    k.line("pid = tl.program_id(0)")
    k.line(f"xlin = pid * {block} + tl.arange(0, {block})")
    k.line(f"mask = xlin < {batch * hidden}")
    k.line(f"b = xlin // {hidden}")
    k.line(f"j = xlin % {hidden}")
    k.line(f"row = {t} * {batch} + b")

    def pre(g: int) -> str:
        return (f"tl.load({xw_p} + row * {width} + {g * hidden} + j, mask=mask, other=0).to(tl.float32)",
                f"tl.load({gh_p} + b * {width} + {g * hidden} + j, mask=mask, other=0).to(tl.float32)")

    k.helpers.add("_kv_tanh")
    k.line(f"h_prev = tl.load({h_p} + xlin, mask=mask, other=0).to(tl.float32)")
    if kind == "lstm":
        for g, name in enumerate("ifgo"):
            x_code, h_code = pre(g)
            k.line(f"x_{name} = {x_code}")
            k.line(f"h_{name} = {h_code}")
        k.line(f"c_prev = tl.load({c_p} + xlin, mask=mask, other=0).to(tl.float32)")
        k.line("c_new = tl.sigmoid(x_f + h_f) * c_prev + tl.sigmoid(x_i + h_i) * _kv_tanh(x_g + h_g)")
        k.line("h_new = tl.sigmoid(x_o + h_o) * _kv_tanh(c_new)")
        k.line(f"tl.store({c_p} + xlin, c_new.to({_tl(c.dtype)}), mask=mask)")  # type: ignore[union-attr]
    elif kind == "gru":
        for g, name in enumerate("rzn"):
            x_code, h_code = pre(g)
            k.line(f"x_{name} = {x_code}")
            k.line(f"h_{name} = {h_code}")
        k.line("r = tl.sigmoid(x_r + h_r)")
        k.line("z = tl.sigmoid(x_z + h_z)")
        k.line("n = _kv_tanh(x_n + r * h_n)")
        k.line("h_new = (1.0 - z) * n + z * h_prev")
    else:
        x_code, h_code = pre(0)
        k.line(f"a = {x_code} + {h_code}")
        k.line("h_new = _kv_tanh(a)" if kind == "rnn_tanh" else "h_new = tl.maximum(a, 0.0)")
    k.line(f"tl.store({h_p} + xlin, h_new.to({_tl(h.dtype)}), mask=mask)")
    k.line(f"tl.store({out_p} + row * {out_width} + {out_offset} + j, h_new.to({_tl(out.dtype)}), mask=mask)")
    n = batch * hidden
    gpu, cpu = min(1024, pow2(n)), min(16384, pow2(n))
    return Kernel(k, kernel_args(k), LaunchShape((math.ceil(n / gpu),), {"BLOCK": gpu}, 4),
                  LaunchShape((math.ceil(n / cpu),), {"BLOCK": cpu}, 1))


def _tl(dtype: str) -> str:
    from services.generator.lowering.kernels import tl_type

    return tl_type(dtype)


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
            gh = Stored(b.new_buffer((batch, gates * hidden), "float32", "gh"))
            with b.loop(f"t{layer}_{d}", seq, reverse=d == 1) as step:
                b.emit(matmul(b, b.kernel_name("rec"), h, w_hh, gh.buffer, 1, batch, gates * hidden, hidden,
                              lambda z, i, kk: [i, kk], _weight_t(w_hh), _bias_epilogue(b_hh)))
                b.emit(_step_kernel(b, kind, xw, gh, h, c, out, step, batch, hidden, dirs * hidden, d * hidden))
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


