"""Generate random corpus specs, a few per operator class, seeded and reproducible.

Each generated file has the corpus's shape: a one-line docstring, module-level size
constants at GPU scale (no ``cpu_shapes``: the system derives screening sizes itself),
``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``. Shapes, reduced
dimensions, dtypes and operator options are drawn at random per class; inputs plus
weights stay under about 1 GB per spec. The output folder also gets ``classes.txt``
(file name, operator class), the manifest the corpus test and README read.

    python -m bench.corpus.random_specs --out bench/corpus/random --per-class 4 --seed 2026

The same seed and per-class count always produce the same files.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_TENSOR_ELEMS = 1 << 26  # 64M elements: 256 MB in float32 per tensor
DTYPE_WEIGHTS = {"float32": 6, "float16": 2, "bfloat16": 2}


@dataclass
class Draft:
    """One spec before rendering: a slug for the file name, the docstring, sizes and code."""

    slug: str
    doc: str
    sizes: dict[str, int]
    body: str
    chained: list[tuple[str, ...]] = field(default_factory=list)  # names written as ``a = b = value``


@dataclass(frozen=True)
class GeneratedSpec:
    """A rendered spec: its file name, operator class and source text."""

    name: str
    op_class: str
    source: str


def _size(rng: random.Random, lo: int, hi: int) -> int:
    """A size in [lo, hi]: a power of two half the time, else a multiple of 8, else anything."""
    pick = rng.random()
    if pick < 0.5:
        powers = [1 << e for e in range(0, 20) if lo <= (1 << e) <= hi]
        if powers:
            return rng.choice(powers)
    if pick < 0.8 and hi - lo >= 8:
        value = rng.randint(lo, hi) // 8 * 8
        return max(lo, value)
    return rng.randint(lo, hi)


def _fit(sizes: dict[str, int], names: list[str], limit: int, floor: int = 1) -> None:
    """Halve the largest of ``names`` (never below ``floor``) until their product is at most ``limit``."""
    while math.prod(sizes[n] for n in names) > limit:
        shrinkable = [n for n in names if sizes[n] // 2 >= floor]
        if not shrinkable:
            return
        largest = max(shrinkable, key=lambda n: sizes[n])
        sizes[largest] //= 2


def _dtype(rng: random.Random, allowed: tuple[str, ...] = ("float32", "float16", "bfloat16")) -> str:
    choices = [d for d in DTYPE_WEIGHTS if d in allowed]
    return rng.choices(choices, weights=[DTYPE_WEIGHTS[d] for d in choices])[0]


def _shape(rng: random.Random, rank: int | None = None,
           limit: int = MAX_TENSOR_ELEMS) -> tuple[dict[str, int], list[str]]:
    """Sizes of an activation tensor of rank 2-4 with names as users write them."""
    rank = rank or rng.choice([2, 2, 3, 4])
    if rank == 2:
        sizes = {"batch_size": _size(rng, 16, 4096), "dim": _size(rng, 256, 16384)}
    elif rank == 3:
        sizes = {"batch_size": _size(rng, 16, 256), "seq_len": _size(rng, 128, 2048), "hidden": _size(rng, 256, 4096)}
    else:
        side = _size(rng, 32, 224)
        sizes = {"batch_size": _size(rng, 16, 128), "channels": _size(rng, 32, 512), "height": side, "width": side}
    names = list(sizes)
    _fit(sizes, names, limit, floor=16)
    return sizes, names


def _shape_expr(names: list[str]) -> str:
    return ", ".join(names)


def _inputs_fn(lines: list[str]) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return f"\n\ndef get_inputs():\n{body}\n"


def _init_fn(values: str = "") -> str:
    return f"\n\ndef get_init_inputs():\n    return [{values}]\n"


def _dt(dtype: str) -> str:
    return f"dtype=torch.{dtype}"


# ---------------------------------------------------------------------------------------------
# Operator classes
# ---------------------------------------------------------------------------------------------

_UNARY: list[tuple[str, str, str]] = [
    # (name, expression in x, input domain)
    ("exp", "torch.exp(x)", "normal"), ("log", "torch.log(x)", "positive"), ("sqrt", "torch.sqrt(x)", "positive"),
    ("rsqrt", "torch.rsqrt(x)", "positive"), ("sin", "torch.sin(x)", "normal"), ("cos", "torch.cos(x)", "normal"),
    ("tanh", "torch.tanh(x)", "normal"), ("abs", "torch.abs(x)", "normal"), ("erf", "torch.erf(x)", "normal"),
    ("log1p", "torch.log1p(x)", "positive"), ("reciprocal", "torch.reciprocal(x)", "nonzero"),
    ("floor", "torch.floor(x * 4)", "normal"), ("square", "x * x", "normal"), ("expm1", "torch.expm1(x)", "normal"),
]
_BINARY: list[tuple[str, str, str]] = [
    ("add", "a + b", "normal"), ("sub", "a - b", "normal"), ("mul", "a * b", "normal"),
    ("div", "a / b", "nonzero"), ("maximum", "torch.maximum(a, b)", "normal"),
    ("minimum", "torch.minimum(a, b)", "normal"), ("pow", "torch.pow(a.abs() + 0.5, b)", "normal"),
    ("atan2", "torch.atan2(a, b)", "normal"), ("greater", "a > b", "normal"),
    ("where", "torch.where(a > 0, a, b)", "normal"), ("hypot", "torch.hypot(a, b)", "normal"),
]
_BITWISE: list[tuple[str, str]] = [
    ("and", "a & b"), ("or", "a | b"), ("xor", "a ^ b"), ("shift_left", "a << 3"), ("not", "~a"),
    ("shift_right_xor", "(a >> 5) ^ b"),
]


def _random_input(domain: str, shape: str, dtype: str) -> str:
    if domain == "positive":
        return f"(torch.rand({shape}) + 0.1).to(torch.{dtype})"
    if domain == "nonzero":
        return f"(torch.randn({shape}).sign() * (torch.rand({shape}) + 0.5)).to(torch.{dtype})"
    return f"torch.randn({shape}, {_dt(dtype)})"


def gen_pointwise(rng: random.Random) -> Draft:
    sizes, names = _shape(rng)
    shape = _shape_expr(names)
    kind = rng.choice(["unary", "binary", "binary", "bitwise", "clamp"])
    if kind == "unary":
        name, expr, domain = rng.choice(_UNARY)
        dtype = _dtype(rng)
        body = f'''

class Model(nn.Module):
    def forward(self, x):
        return {expr}
''' + _inputs_fn([f"return [{_random_input(domain, shape, dtype)}]"]) + _init_fn()
        return Draft(f"{name}_{dtype}", f"Elementwise {name} of a {len(names)}D {dtype} tensor.", sizes, body)
    if kind == "binary":
        name, expr, domain = rng.choice(_BINARY)
        dtype = _dtype(rng)
        broadcast = rng.choice(["full", "last", "first"])
        if broadcast == "last":
            b_shape = ", ".join(["1"] * (len(names) - 1) + [names[-1]])
        elif broadcast == "first":
            b_shape = ", ".join([names[0]] + ["1"] * (len(names) - 1))
        else:
            b_shape = shape
        body = f'''

class Model(nn.Module):
    def forward(self, a, b):
        return {expr}
''' + _inputs_fn([f"a = torch.randn({shape}, {_dt(dtype)})",
                  f"b = {_random_input(domain, b_shape, dtype)}", "return [a, b]"]) + _init_fn()
        where = {"full": "same shape", "last": "b broadcast over leading dims",
                 "first": "b broadcast over trailing dims"}[broadcast]
        doc = f"Elementwise {name} of two {dtype} tensors ({where})."
        return Draft(f"{name}_{broadcast}", doc, sizes, body)
    if kind == "bitwise":
        name, expr = rng.choice(_BITWISE)
        itype = rng.choice(["int32", "int64"])
        body = f'''

class Model(nn.Module):
    def forward(self, a, b):
        return {expr}
''' + _inputs_fn([f"a = torch.randint(0, 1 << 30, ({shape},), dtype=torch.{itype})",
                  f"b = torch.randint(0, 1 << 30, ({shape},), dtype=torch.{itype})", "return [a, b]"]) + _init_fn()
        return Draft(f"bitwise_{name}_{itype}", f"Bitwise {name.replace('_', ' ')} on {itype} tensors.", sizes, body)
    dtype = _dtype(rng)
    lo = round(-rng.uniform(0.2, 3.0), 2)
    hi = round(rng.uniform(0.2, 3.0), 2)
    body = f'''

class Model(nn.Module):
    def __init__(self, min_value, max_value):
        super().__init__()
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        return torch.clamp(x, self.min_value, self.max_value)
''' + _inputs_fn([f"return [torch.randn({shape}, {_dt(dtype)}) * 2]"]) + _init_fn(f"{lo}, {hi}")
    return Draft(f"clamp_{dtype}", f"Clamp of a {dtype} tensor into [{lo}, {hi}].", sizes, body)


_ACTIVATIONS: list[tuple[str, Callable[[random.Random], tuple[str, str]]]] = [
    ("relu", lambda r: ("nn.ReLU()", "F.relu(x)")),
    ("gelu", lambda r: ("nn.GELU()", "F.gelu(x)")),
    ("gelu_tanh", lambda r: ('nn.GELU(approximate="tanh")', 'F.gelu(x, approximate="tanh")')),
    ("silu", lambda r: ("nn.SiLU()", "F.silu(x)")),
    ("mish", lambda r: ("nn.Mish()", "F.mish(x)")),
    ("hardswish", lambda r: ("nn.Hardswish()", "F.hardswish(x)")),
    ("hardsigmoid", lambda r: ("nn.Hardsigmoid()", "F.hardsigmoid(x)")),
    ("relu6", lambda r: ("nn.ReLU6()", "F.relu6(x)")),
    ("selu", lambda r: ("nn.SELU()", "F.selu(x)")),
    ("sigmoid", lambda r: ("nn.Sigmoid()", "torch.sigmoid(x)")),
    ("softsign", lambda r: ("nn.Softsign()", "F.softsign(x)")),
    ("logsigmoid", lambda r: ("nn.LogSigmoid()", "F.logsigmoid(x)")),
]


def _param_activation(r: random.Random) -> tuple[str, str, str]:
    kind = r.choice(["elu", "leaky_relu", "hardtanh", "softplus", "celu"])
    if kind == "elu":
        a = round(r.uniform(0.5, 2.0), 2)
        return kind, f"nn.ELU(alpha={a})", f"F.elu(x, alpha={a})"
    if kind == "leaky_relu":
        s = r.choice([0.01, 0.1, 0.2, 0.3])
        return kind, f"nn.LeakyReLU({s})", f"F.leaky_relu(x, negative_slope={s})"
    if kind == "hardtanh":
        lo, hi = round(-r.uniform(0.5, 3), 2), round(r.uniform(0.5, 3), 2)
        return kind, f"nn.Hardtanh({lo}, {hi})", f"F.hardtanh(x, {lo}, {hi})"
    if kind == "softplus":
        b, t = r.choice([1.0, 2.0, 0.5]), r.choice([20.0, 10.0, 5.0])
        return kind, f"nn.Softplus(beta={b}, threshold={t})", f"F.softplus(x, beta={b}, threshold={t})"
    a = round(r.uniform(0.5, 2.0), 2)
    return kind, f"nn.CELU(alpha={a})", f"F.celu(x, alpha={a})"


def gen_activation(rng: random.Random) -> Draft:
    sizes, names = _shape(rng)
    dtype = _dtype(rng)
    if rng.random() < 0.4:
        name, module_form, functional_form = _param_activation(rng)
    else:
        name, make = rng.choice(_ACTIVATIONS)
        module_form, functional_form = make(rng)
    if rng.random() < 0.5:
        model = f'''

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = {module_form}

    def forward(self, x):
        return self.act(x)
'''
    else:
        model = f'''

class Model(nn.Module):
    def forward(self, x):
        return {functional_form}
'''
    body = model + _inputs_fn([f"return [torch.randn({_shape_expr(names)}, {_dt(dtype)}) * 3]"]) + _init_fn()
    return Draft(f"{name}_{dtype}", f"{name} activation on a {len(names)}D {dtype} tensor.", sizes, body)


def gen_reduction(rng: random.Random) -> Draft:
    sizes, names = _shape(rng)
    rank = len(names)
    op = rng.choice(["sum", "mean", "amax", "amin", "prod", "var", "std", "argmax", "argmin", "any", "all",
                     "logsumexp", "norm"])
    single_dim = op in ("argmax", "argmin", "prod")
    if single_dim:
        dims: list[int] = [rng.randrange(rank)]
    else:
        count = rng.randint(1, rank - 1) if rank > 2 else 1
        dims = sorted(rng.sample(range(rank), count))
    keepdim = rng.random() < 0.5
    dim_expr = str(dims[0]) if len(dims) == 1 else "(" + ", ".join(map(str, dims)) + ")"
    dtype = _dtype(rng) if op in ("sum", "mean", "amax", "amin", "argmax", "argmin") else "float32"
    shape = _shape_expr(names)
    make = f"torch.randn({shape}, {_dt(dtype)})"
    if op == "prod":
        make = f"1.0 + 0.01 * torch.randn({shape})"
        sizes[names[dims[0]]] = min(sizes[names[dims[0]]], 512)
    if op in ("any", "all"):
        make = f"torch.randn({shape}) > {2.5 if op == 'any' else -2.5}"
    extra = ""
    if op in ("var", "std"):
        extra = f", correction={rng.choice([0, 1])}"
    if op == "norm":
        p = rng.choice(["1", "2", "3", 'float("inf")'])
        expr = f"torch.linalg.vector_norm(x, ord={p}, dim={dim_expr}, keepdim={keepdim})"
        label = f"p={p.replace('float(', '').replace(')', '')} norm"
    elif op in ("argmax", "argmin"):
        expr = f"torch.{op}(x, dim={dim_expr}, keepdim={keepdim})"
        label = op
    else:
        expr = f"torch.{op}(x, dim={dim_expr}{extra}, keepdim={keepdim})"
        label = op
    body = f'''

class Model(nn.Module):
    def forward(self, x):
        return {expr}
''' + _inputs_fn([f"return [{make}]"]) + _init_fn()
    dims_text = ", ".join(names[d] for d in dims)
    doc = f"{label} over ({dims_text}) of a {rank}D tensor, keepdim={keepdim}."
    return Draft(f"{op}_dims_{''.join(map(str, dims))}", doc, sizes, body)


def _mnk(rng: random.Random) -> dict[str, int]:
    sizes = {"M": _size(rng, 64, 8192), "K": _size(rng, 64, 8192), "N": _size(rng, 64, 8192)}
    for pair in (("M", "K"), ("K", "N"), ("M", "N")):
        _fit(sizes, list(pair), MAX_TENSOR_ELEMS // 2, floor=32)
    return sizes


def gen_matmul(rng: random.Random) -> Draft:
    kind = rng.choice(["mm", "trans_a", "trans_b", "bmm", "addmm", "baddbmm", "linear", "broadcast", "matvec",
                       "einsum"])
    dtype = _dtype(rng)
    dt = _dt(dtype)
    if kind in ("mm", "trans_a", "trans_b", "addmm", "matvec", "linear"):
        sizes = _mnk(rng)
        if kind == "mm":
            forward, doc = "return torch.matmul(A, B)", "A @ B"
            inputs = ["torch.randn(M, K, {dt})", "torch.randn(K, N, {dt})"]
        elif kind == "trans_a":
            forward, inputs, doc = "return A.T @ B", ["torch.randn(K, M, {dt})", "torch.randn(K, N, {dt})"], "A.T @ B"
        elif kind == "trans_b":
            forward, inputs, doc = "return A @ B.T", ["torch.randn(M, K, {dt})", "torch.randn(N, K, {dt})"], "A @ B.T"
        elif kind == "addmm":
            alpha, beta = rng.choice([1.0, 0.5, 2.0]), rng.choice([1.0, 0.0, 0.25])
            forward = f"return torch.addmm(C, A, B, beta={beta}, alpha={alpha})"
            inputs = ["torch.randn(N, {dt})", "torch.randn(M, K, {dt})", "torch.randn(K, N, {dt})"]
            doc = f"addmm {beta} * C + {alpha} * (A @ B)"
        elif kind == "matvec":
            forward, doc = "return torch.mv(A, v)", "matrix-vector A @ v"
            inputs = ["torch.randn(M, K, {dt})", "torch.randn(K, {dt})"]
            sizes.pop("N")
        else:
            bias = rng.random() < 0.7
            body = f'''

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias={bias}, {dt})

    def forward(self, x):
        return self.fc(x)
''' + _inputs_fn([f"return [torch.randn(M, K, {dt})]"]) + _init_fn("K, N")
            return Draft(f"linear_{dtype}", f"nn.Linear (bias={bias}) from K to N features, {dtype}.", sizes, body)
        args = ", ".join(chr(ord("A") + i) if kind != "addmm" else "CAB"[i] for i in range(len(inputs)))
        if kind == "matvec":
            args = "A, v"
        body = f'''

class Model(nn.Module):
    def forward(self, {args}):
        {forward}
''' + _inputs_fn([f"return [{', '.join(i.format(dt=dt) for i in inputs)}]"]) + _init_fn()
        return Draft(f"{kind}_{dtype}", f"{doc} with {dtype} operands.", sizes, body)
    if kind in ("bmm", "baddbmm", "einsum"):
        sizes = {"batch": _size(rng, 16, 512), "m": _size(rng, 32, 1024), "k": _size(rng, 32, 512),
                 "n": _size(rng, 32, 1024)}
        _fit(sizes, ["batch", "m", "k"], MAX_TENSOR_ELEMS // 2, floor=16)
        _fit(sizes, ["batch", "m", "n"], MAX_TENSOR_ELEMS // 2, floor=16)
        _fit(sizes, ["batch", "k", "n"], MAX_TENSOR_ELEMS // 2, floor=16)
        a, b = f"torch.randn(batch, m, k, {dt})", f"torch.randn(batch, k, n, {dt})"
        if kind == "bmm":
            return Draft(f"bmm_{dtype}", f"Batched matmul with {dtype} operands.", sizes, '''

class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)
''' + _inputs_fn([f"return [{a}, {b}]"]) + _init_fn())
        if kind == "baddbmm":
            alpha = rng.choice([1.0, 0.125, 0.5])
            return Draft(f"baddbmm_{dtype}", f"baddbmm bias + {alpha} * bmm(a, b), {dtype}.", sizes, f'''

class Model(nn.Module):
    def forward(self, bias, a, b):
        return torch.baddbmm(bias, a, b, alpha={alpha})
''' + _inputs_fn([f"return [torch.randn(1, m, n, {dt}), {a}, {b}]"]) + _init_fn())
        return Draft(f"einsum_bmk_bkn_{dtype}", f"einsum 'bmk,bnk->bmn' with {dtype} operands.", sizes, '''

class Model(nn.Module):
    def forward(self, a, b):
        return torch.einsum("bmk,bnk->bmn", a, b)
''' + _inputs_fn([f"return [{a}, torch.randn(batch, n, k, {dt})]"]) + _init_fn())
    if kind == "broadcast":
        sizes = {"batch": _size(rng, 16, 64), "heads": _size(rng, 4, 32), "seq": _size(rng, 128, 2048),
                 "d_in": _size(rng, 32, 256), "d_out": _size(rng, 32, 512)}
        _fit(sizes, ["batch", "heads", "seq", "d_in"], MAX_TENSOR_ELEMS, floor=4)
        _fit(sizes, ["batch", "heads", "seq", "d_out"], MAX_TENSOR_ELEMS, floor=4)
        return Draft(f"broadcast_4d_2d_{dtype}", f"Broadcasting matmul of a 4D {dtype} tensor with a 2D matrix.", sizes, '''

class Model(nn.Module):
    def forward(self, x, w):
        return torch.matmul(x, w)
''' + _inputs_fn([f"return [torch.randn(batch, heads, seq, d_in, {dt}), torch.randn(d_in, d_out, {dt})]"]) + _init_fn())
    raise AssertionError(kind)


def _spatial(rng: random.Random, nd: int) -> dict[str, int]:
    if nd == 1:
        return {"length": _size(rng, 256, 8192)}
    if nd == 2:
        side = _size(rng, 32, 224)
        if rng.random() < 0.7:
            return {"height": side, "width": side}
        return {"height": side, "width": _size(rng, 32, 224)}
    return {"depth": _size(rng, 8, 32), "height": _size(rng, 32, 112), "width": _size(rng, 32, 112)}


def _chain_if_square(sizes: dict[str, int]) -> list[tuple[str, ...]]:
    if "height" in sizes and "width" in sizes and sizes["height"] == sizes["width"]:
        return [("height", "width")]
    return []


def gen_convolution(rng: random.Random) -> Draft:
    nd = rng.choice([1, 2, 2, 2, 3])
    in_ch = _size(rng, 32, 512)
    groups_kind = rng.choice(["dense", "dense", "depthwise", "grouped", "pointwise"])
    if groups_kind == "depthwise":
        out_ch, groups = in_ch * rng.choice([1, 1, 2]), in_ch
    elif groups_kind == "grouped":
        groups = rng.choice([2, 4, 8])
        in_ch = max(groups, in_ch // groups * groups)
        out_ch = groups * max(1, _size(rng, 32, 512) // groups)
    else:
        out_ch, groups = _size(rng, 32, 512), 1
    kernel = 1 if groups_kind == "pointwise" else rng.choice([3, 3, 5, 7] if nd < 3 else [3, 3, 5])
    stride = rng.choice([1, 1, 2])
    dilation = rng.choice([1, 1, 2]) if kernel > 1 else 1
    same = stride == 1 and kernel > 1 and rng.random() < 0.3
    padding = '"same"' if same else str(rng.choice([0, dilation * (kernel // 2)]))
    bias = rng.random() < 0.6
    dtype = _dtype(rng, ("float32", "float16")) if nd == 2 else "float32"
    sizes = {"batch_size": _size(rng, 16, 64), "in_channels": in_ch, "out_channels": out_ch}
    sizes.update(_spatial(rng, nd))
    spatial = [k for k in ("depth", "length", "height", "width") if k in sizes]
    _fit(sizes, ["batch_size", *spatial], MAX_TENSOR_ELEMS // max(in_ch, out_ch), floor=8)
    for name in spatial:
        sizes[name] = max(sizes[name], 2 * (dilation * (kernel - 1) + 1))
    layer = f"nn.Conv{nd}d"
    body = f'''

class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = {layer}(in_channels, out_channels, {kernel}, stride={stride}, padding={padding}, dilation={dilation},
                              groups={groups}, bias={bias}, {_dt(dtype)})

    def forward(self, x):
        return self.conv(x)
''' + _inputs_fn([f"return [torch.randn(batch_size, in_channels, {', '.join(spatial)}, {_dt(dtype)})]"]) + _init_fn(
        "in_channels, out_channels")
    doc = (f"{layer} kernel {kernel}, stride {stride}, padding {padding.strip(chr(34))}, dilation {dilation}, "
           f"groups {groups} ({groups_kind}), {dtype}.")
    return Draft(f"conv{nd}d_{groups_kind}_k{kernel}_s{stride}", doc, sizes, body, _chain_if_square(sizes))


def gen_conv_transpose(rng: random.Random) -> Draft:
    nd = rng.choice([1, 2, 2, 3])
    kernel = rng.choice([2, 3, 4, 5])
    stride = rng.choice([1, 2, 2, 3])
    dilation = rng.choice([1, 1, 2])
    padding = rng.randint(0, (dilation * (kernel - 1)) // 2)
    output_padding = rng.randrange(max(stride, dilation)) if rng.random() < 0.5 else 0
    groups = rng.choice([1, 1, 2, 4])
    in_ch = groups * max(1, _size(rng, 32, 512) // groups)
    out_ch = groups * max(1, _size(rng, 32, 256) // groups)
    bias = rng.random() < 0.6
    dtype = _dtype(rng, ("float32", "float16")) if nd == 2 else "float32"
    sizes = {"batch_size": _size(rng, 16, 64), "in_channels": in_ch, "out_channels": out_ch}
    sizes.update(_spatial(rng, nd))
    spatial = [k for k in ("depth", "length", "height", "width") if k in sizes]
    for name in spatial:
        sizes[name] = max(4, sizes[name] // stride)
    out_scale = stride ** len(spatial)
    _fit(sizes, ["batch_size", *spatial], MAX_TENSOR_ELEMS // max(in_ch, out_ch * out_scale), floor=4)
    layer = f"nn.ConvTranspose{nd}d"
    body = f'''

class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = {layer}(in_channels, out_channels, {kernel}, stride={stride}, padding={padding},
                                       output_padding={output_padding}, groups={groups}, bias={bias},
                                       dilation={dilation}, {_dt(dtype)})

    def forward(self, x):
        return self.deconv(x)
''' + _inputs_fn([f"return [torch.randn(batch_size, in_channels, {', '.join(spatial)}, {_dt(dtype)})]"]) + _init_fn(
        "in_channels, out_channels")
    doc = (f"{layer} kernel {kernel}, stride {stride}, padding {padding}, output_padding {output_padding}, "
           f"dilation {dilation}, groups {groups}, {dtype}.")
    return Draft(f"conv_transpose{nd}d_k{kernel}_s{stride}", doc, sizes, body, _chain_if_square(sizes))


def gen_pooling(rng: random.Random) -> Draft:
    nd = rng.choice([1, 2, 2, 3])
    kind = rng.choice(["max", "avg", "adaptive_avg", "adaptive_max"])
    sizes = {"batch_size": _size(rng, 16, 128), "channels": _size(rng, 32, 512)}
    sizes.update(_spatial(rng, nd))
    spatial = [k for k in ("depth", "length", "height", "width") if k in sizes]
    _fit(sizes, ["batch_size", *spatial], MAX_TENSOR_ELEMS // sizes["channels"], floor=8)
    dtype = _dtype(rng, ("float32", "float16")) if nd == 2 else "float32"
    if kind.startswith("adaptive"):
        out = [rng.choice([1, 1, 2, 4, 7]) for _ in spatial]
        out_expr = str(out[0]) if nd == 1 else "(" + ", ".join(map(str, out)) + ")"
        layer = f"nn.Adaptive{'Avg' if kind == 'adaptive_avg' else 'Max'}Pool{nd}d({out_expr})"
        doc = f"Adaptive {kind.split('_')[1]} pooling ({nd}D) to {out_expr}, {dtype}."
    else:
        kernel = rng.choice([2, 3, 3, 4, 5])
        stride = rng.randint(1, kernel)
        padding = rng.randint(0, kernel // 2)
        ceil_mode = rng.random() < 0.4
        if kind == "max":
            dilation = rng.choice([1, 1, 2])
            if dilation > 1:
                padding = min(padding, kernel // 2)
            layer = (f"nn.MaxPool{nd}d({kernel}, stride={stride}, padding={padding}, dilation={dilation}, "
                     f"ceil_mode={ceil_mode})")
        else:
            include = rng.random() < 0.5
            layer = (f"nn.AvgPool{nd}d({kernel}, stride={stride}, padding={padding}, ceil_mode={ceil_mode}, "
                     f"count_include_pad={include})")
        for name in spatial:
            sizes[name] = max(sizes[name], 2 * kernel + 1)
        doc = f"{layer.split('(')[0][3:]} ({nd}D) {layer.split('(', 1)[1].rstrip(')')}, {dtype}."
    body = f'''

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {layer}

    def forward(self, x):
        return self.pool(x)
''' + _inputs_fn([f"return [torch.randn(batch_size, channels, {', '.join(spatial)}, {_dt(dtype)})]"]) + _init_fn()
    return Draft(f"{kind}_pool{nd}d", doc, sizes, body, _chain_if_square(sizes))


def gen_normalization(rng: random.Random) -> Draft:
    kind = rng.choice(["batchnorm", "groupnorm", "instancenorm", "layernorm", "rmsnorm", "l2normalize", "lrn"])
    eps = rng.choice([1e-5, 1e-6, 1e-3])
    if kind in ("layernorm", "rmsnorm", "l2normalize"):
        sizes, names = _shape(rng)
        dtype = _dtype(rng)
        if kind == "layernorm":
            k = rng.randint(1, len(names) - 1)
            norm_names = names[-k:]
            affine = rng.random() < 0.7
            body = f'''

class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.norm = nn.LayerNorm(normalized_shape, eps={eps}, elementwise_affine={affine}, {_dt(dtype)})

    def forward(self, x):
        return self.norm(x)
''' + _inputs_fn([f"return [torch.randn({_shape_expr(names)}, {_dt(dtype)}) * 2 + 1]"]) + _init_fn(
                "(" + ", ".join(norm_names) + ",)")
            _fit(sizes, norm_names, 1 << 22, floor=16)
            doc = f"LayerNorm over ({', '.join(norm_names)}) of a {len(names)}D {dtype} tensor, affine={affine}."
            return Draft(f"layernorm_last{k}_{dtype}", doc, sizes, body)
        if kind == "rmsnorm":
            body = f'''

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, {_dt(dtype)}))
        self.eps = {eps}

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.to(x.dtype) * self.weight
''' + _inputs_fn([f"return [torch.randn({_shape_expr(names)}, {_dt(dtype)})]"]) + _init_fn(names[-1])
            return Draft(f"rmsnorm_{dtype}", f"RMSNorm by hand over the last dimension, {dtype} in, float32 math.", sizes, body)
        dim = rng.randrange(len(names))
        p = rng.choice([1.0, 2.0])
        body = f'''

class Model(nn.Module):
    def forward(self, x):
        return F.normalize(x, p={p}, dim={dim}, eps={eps})
''' + _inputs_fn([f"return [torch.randn({_shape_expr(names)})]"]) + _init_fn()
        return Draft(f"normalize_p{int(p)}_dim{dim}", f"F.normalize with p={p} along dim {dim}.", sizes, body)
    nd = 2 if kind == "lrn" else rng.choice([1, 2, 2, 3])
    sizes = {"batch_size": _size(rng, 16, 128), "channels": _size(rng, 32, 512)}
    sizes.update(_spatial(rng, nd))
    spatial = [k for k in ("depth", "length", "height", "width") if k in sizes]
    _fit(sizes, ["batch_size", "channels", *spatial], MAX_TENSOR_ELEMS, floor=8)
    if kind == "batchnorm":
        affine = rng.random() < 0.8
        layer, doc = f"nn.BatchNorm{nd}d(channels, eps={eps}, affine={affine})", f"BatchNorm{nd}d (running stats), affine={affine}."
    elif kind == "groupnorm":
        groups = rng.choice([g for g in (1, 2, 4, 8, 16, 32) if sizes["channels"] % g == 0])
        layer, doc = f"nn.GroupNorm({groups}, channels, eps={eps})", f"GroupNorm with {groups} groups over {nd}D feature maps."
    elif kind == "instancenorm":
        affine = rng.random() < 0.5
        layer, doc = f"nn.InstanceNorm{nd}d(channels, eps={eps}, affine={affine})", f"InstanceNorm{nd}d, affine={affine}."
    else:
        size = rng.choice([3, 5, 7])
        layer, doc = f"nn.LocalResponseNorm({size})", f"LocalResponseNorm across {size} channels."
    body = f'''

class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = {layer}

    def forward(self, x):
        return self.norm(x)
''' + _inputs_fn([f"return [torch.randn(batch_size, channels, {', '.join(spatial)}) * 2 + 0.5]"]) + _init_fn("channels")
    return Draft(f"{kind}{nd}d", doc, sizes, body, _chain_if_square(sizes))


def gen_softmax(rng: random.Random) -> Draft:
    sizes, names = _shape(rng)
    dim = rng.choice([-1, -1, rng.randrange(len(names))])
    kind = rng.choice(["softmax", "log_softmax", "softmin"])
    dtype = _dtype(rng)
    upcast = dtype != "float32" and rng.random() < 0.5
    extra = ", dtype=torch.float32" if upcast else ""
    body = f'''

class Model(nn.Module):
    def forward(self, x):
        return F.{kind}(x, dim={dim}{extra})
''' + _inputs_fn([f"return [torch.randn({_shape_expr(names)}, {_dt(dtype)}) * {rng.choice([1, 4, 10])}]"]) + _init_fn()
    dim_name = names[dim]
    doc = f"{kind} over {dim_name} of a {len(names)}D {dtype} tensor" + (", computed in float32." if upcast else ".")
    return Draft(f"{kind}_{dim_name}_{dtype}", doc, sizes, body)


def gen_scan(rng: random.Random) -> Draft:
    sizes, names = _shape(rng, rank=rng.choice([2, 2, 3]))
    dim = rng.randrange(len(names))
    op = rng.choice(["cumsum", "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "cumsum_int"])
    reverse = rng.random() < 0.3
    exclusive = op == "cumsum" and not reverse and rng.random() < 0.4
    shape = _shape_expr(names)
    if op == "cumsum_int":
        make = f"torch.randint(0, 100, ({shape},), dtype=torch.int32)"
        expr = f"torch.cumsum(x, dim={dim}, dtype=torch.int64)"
    elif op == "cumprod":
        make = f"1.0 + 0.001 * torch.randn({shape})"
        expr = f"torch.cumprod(x, dim={dim})"
    elif op in ("cummax", "cummin"):
        make = f"torch.randn({shape})"
        expr = f"torch.{op}(x, dim={dim}).values"
    else:
        make = f"torch.randn({shape})"
        expr = f"torch.{op}(x, dim={dim})"
    if reverse:
        expr = expr.replace("(x,", f"(x.flip({dim}),", 1) + f".flip({dim})"
    if exclusive:
        expr = f"{expr} - x"
    body = f'''

class Model(nn.Module):
    def forward(self, x):
        return {expr}
''' + _inputs_fn([f"return [{make}]"]) + _init_fn()
    mode = "reverse " if reverse else "exclusive " if exclusive else ""
    doc = f"{mode}{op.replace('_int', ' of int32 counts')} along {names[dim]} of a {len(names)}D tensor."
    return Draft(f"{mode.strip() + '_' if mode else ''}{op}_dim{dim}", doc[0].upper() + doc[1:], sizes, body)


def gen_index(rng: random.Random) -> Draft:
    kind = rng.choice(["gather", "scatter_add", "index_select", "embedding", "embedding_bag", "index_add",
                       "take_along_dim"])
    if kind in ("embedding", "embedding_bag"):
        sizes = {"num_embeddings": _size(rng, 1000, 1_000_000), "embedding_dim": _size(rng, 16, 256),
                 "batch_size": _size(rng, 256, 16384), "bag_size": _size(rng, 1, 64)}
        _fit(sizes, ["num_embeddings", "embedding_dim"], MAX_TENSOR_ELEMS, floor=16)
        _fit(sizes, ["batch_size", "bag_size", "embedding_dim"], MAX_TENSOR_ELEMS, floor=1)
        if kind == "embedding":
            pad = rng.random() < 0.3
            layer = "nn.Embedding(num_embeddings, embedding_dim" + (", padding_idx=0)" if pad else ")")
            doc = "nn.Embedding lookup of (batch, bag) ids" + (" with padding_idx=0." if pad else ".")
            forward, inputs = "return self.table(ids)", ["torch.randint(0, num_embeddings, (batch_size, bag_size))"]
        else:
            mode = rng.choice(["sum", "mean", "max"])
            layer = f'nn.EmbeddingBag(num_embeddings, embedding_dim, mode="{mode}")'
            if rng.random() < 0.5:
                doc = f"EmbeddingBag ({mode}) over fixed-size bags given as a 2D id tensor."
                forward, inputs = "return self.table(ids)", ["torch.randint(0, num_embeddings, (batch_size, bag_size))"]
            else:
                doc = f"EmbeddingBag ({mode}) over a flat id list with per-bag offsets."
                forward = "return self.table(ids, offsets)"
                inputs = ["torch.randint(0, num_embeddings, (batch_size * bag_size,))",
                          "torch.arange(0, batch_size * bag_size, bag_size)"]
        args = "ids, offsets" if len(inputs) == 2 else "ids"
        body = f'''

class Model(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.table = {layer}

    def forward(self, {args}):
        {forward}
''' + _inputs_fn([f"return [{', '.join(inputs)}]"]) + _init_fn("num_embeddings, embedding_dim")
        return Draft(kind, doc, sizes, body)
    sizes = {"rows": _size(rng, 1024, 65536), "cols": _size(rng, 64, 4096), "num_index": _size(rng, 256, 65536)}
    _fit(sizes, ["rows", "cols"], MAX_TENSOR_ELEMS, floor=16)
    _fit(sizes, ["num_index", "cols"], MAX_TENSOR_ELEMS, floor=16)
    dtype = _dtype(rng, ("float32", "float16"))
    dt = _dt(dtype)
    if kind == "gather":
        dim = rng.choice([0, 1])
        idx_shape = "num_index, cols" if dim == 0 else "rows, num_index"
        _fit(sizes, ["rows", "num_index"], MAX_TENSOR_ELEMS // 2, floor=16)
        bound = "rows" if dim == 0 else "cols"
        forward, args = f"return torch.gather(x, {dim}, index)", "x, index"
        inputs = [f"torch.randn(rows, cols, {dt})", f"torch.randint(0, {bound}, ({idx_shape}))"]
        doc = f"torch.gather along dim {dim}."
    elif kind == "take_along_dim":
        forward, args = "return torch.take_along_dim(x, order, dim=1)", "x, order"
        inputs = [f"torch.randn(rows, cols, {dt})", "torch.argsort(torch.rand(rows, cols), dim=1)"]
        doc = "take_along_dim with a per-row permutation."
    elif kind == "scatter_add":
        forward, args = ("index = segment.unsqueeze(1).expand(-1, src.size(1))\n"
                         "        return torch.zeros(rows, src.size(1), dtype=src.dtype, device=src.device)"
                         ".scatter_add(0, index, src)"), "src, segment"
        inputs = [f"torch.randn(num_index, cols, {dt})", "torch.randint(0, rows, (num_index,))"]
        doc = "scatter_add of rows into buckets along dim 0."
    elif kind == "index_select":
        dim = rng.choice([0, 1])
        bound = "rows" if dim == 0 else "cols"
        forward, args = f"return torch.index_select(x, {dim}, idx)", "x, idx"
        inputs = [f"torch.randn(rows, cols, {dt})", f"torch.randint(0, {bound}, (num_index,))"]
        doc = f"index_select along dim {dim}."
    else:
        alpha = rng.choice([1.0, 0.5, -1.0])
        forward, args = f"return acc.index_add(0, idx, src, alpha={alpha})", "acc, idx, src"
        inputs = [f"torch.randn(rows, cols, {dt})", "torch.randint(0, rows, (num_index,))",
                  f"torch.randn(num_index, cols, {dt})"]
        doc = f"index_add along dim 0 with alpha={alpha}."
    body = f'''

class Model(nn.Module):
    def forward(self, {args}):
        {forward}
''' + _inputs_fn([f"return [{', '.join(inputs)}]"]) + _init_fn()
    return Draft(f"{kind}_{dtype}", doc[0].upper() + doc[1:].rstrip(".") + f", {dtype}.", sizes, body)


def gen_layout(rng: random.Random) -> Draft:
    sizes, names = _shape(rng, rank=rng.choice([2, 3, 4]), limit=MAX_TENSOR_ELEMS // 2)
    rank = len(names)
    shape = _shape_expr(names)
    kind = rng.choice(["cat", "stack", "permute", "transpose", "flip", "roll", "pad", "narrow", "triu", "repeat",
                       "unfold"])
    args, n_inputs = "x", 1
    if kind == "cat":
        n_inputs = rng.randint(2, 4)
        dim = rng.randrange(rank)
        args = ", ".join(f"x{i}" for i in range(n_inputs))
        expr, doc = f"torch.cat([{args}], dim={dim})", f"Concatenates {n_inputs} tensors along {names[dim]}."
    elif kind == "stack":
        n_inputs = rng.randint(2, 4)
        dim = rng.randint(0, rank)
        args = ", ".join(f"x{i}" for i in range(n_inputs))
        expr, doc = f"torch.stack([{args}], dim={dim})", f"Stacks {n_inputs} tensors along a new dim {dim}."
    elif kind == "permute":
        perm = list(range(rank))
        while perm == list(range(rank)):
            rng.shuffle(perm)
        expr, doc = f"x.permute({', '.join(map(str, perm))}).contiguous()", f"Materialised permute {tuple(perm)}."
    elif kind == "transpose":
        a, b = rng.sample(range(rank), 2)
        expr, doc = f"x.transpose({a}, {b}).contiguous()", f"Materialised transpose of dims {a} and {b}."
    elif kind == "flip":
        dims = sorted(rng.sample(range(rank), rng.randint(1, rank)))
        expr, doc = f"torch.flip(x, dims={tuple(dims)})", f"Flip along dims {tuple(dims)}."
    elif kind == "roll":
        dims = sorted(rng.sample(range(rank), rng.randint(1, 2)))
        shifts = tuple(rng.randint(-50, 50) or 1 for _ in dims)
        expr, doc = f"torch.roll(x, shifts={shifts}, dims={tuple(dims)})", f"Cyclic roll by {shifts} along dims {tuple(dims)}."
    elif kind == "pad":
        mode = rng.choice(["constant", "reflect", "replicate"]) if rank >= 3 else "constant"
        amounts = tuple(rng.randint(0, 8) for _ in range(2 * (1 if rank < 4 or mode == "constant" else 2)))
        value = f", value={rng.choice([0.0, -1.0, 0.5])}" if mode == "constant" else ""
        expr, doc = f'F.pad(x, {amounts}, mode="{mode}"{value})', f"{mode} padding {amounts} of the trailing dims."
    elif kind == "narrow":
        dim = rng.randrange(rank)
        start = rng.randint(0, sizes[names[dim]] // 2)
        length = max(1, sizes[names[dim]] // 2 - rng.randint(0, sizes[names[dim]] // 4))
        expr = f"torch.narrow(x, {dim}, {start}, {length}).contiguous()"
        doc = f"narrow of {length} entries from {start} along {names[dim]}."
    elif kind == "triu":
        op, diag = rng.choice(["triu", "tril"]), rng.randint(-3, 3)
        expr, doc = f"torch.{op}(x, diagonal={diag})", f"{op} with diagonal {diag} of the trailing two dims."
    elif kind == "repeat":
        reps = tuple(rng.choice([1, 1, 2, 3]) for _ in range(rank))
        if reps == (1,) * rank:
            reps = (2,) + reps[1:]
        for name, r in zip(names, reps):
            if r > 1:
                sizes[name] = max(16, sizes[name] // r)
        expr, doc = f"x.repeat{reps}", f"Tile with repeat{reps}."
    else:
        dim = rank - 1
        size = rng.choice([4, 8, 16, 32])
        step = rng.choice([1, size // 2, size])
        sizes[names[dim]] = max(sizes[names[dim]], size)
        _fit(sizes, names, MAX_TENSOR_ELEMS * step // (size * 2), floor=16)
        sizes[names[dim]] = max(sizes[names[dim]], size)
        expr, doc = f"x.unfold({dim}, {size}, {step}).contiguous()", f"Sliding windows (size {size}, step {step}) via Tensor.unfold."
    dtype = _dtype(rng)
    inputs = ", ".join([f"torch.randn({shape}, {_dt(dtype)})"] * n_inputs)
    body = f'''

class Model(nn.Module):
    def forward(self, {args}):
        return {expr}
''' + _inputs_fn([f"return [{inputs}]"]) + _init_fn()
    return Draft(f"{kind}_{rank}d", doc[0].upper() + doc[1:], sizes, body)


def gen_loss(rng: random.Random) -> Draft:
    kind = rng.choice(["cross_entropy", "nll", "mse", "l1", "smooth_l1", "huber", "bce_logits", "kl_div",
                       "margin_ranking", "cosine_embedding", "triplet", "soft_margin"])
    reduction = rng.choice(["mean", "mean", "sum", "none"])
    sizes = {"batch_size": _size(rng, 256, 65536), "num_classes": _size(rng, 10, 8192)}
    _fit(sizes, ["batch_size", "num_classes"], MAX_TENSOR_ELEMS, floor=8)
    logits = "torch.randn(batch_size, num_classes) * 2"
    labels = "torch.randint(0, num_classes, (batch_size,))"
    if kind == "cross_entropy":
        smoothing = rng.choice([0.0, 0.1])
        expr = f'F.cross_entropy(logits, target, label_smoothing={smoothing}, reduction="{reduction}")'
        inputs, args = [logits, labels], "logits, target"
        doc = f"Cross-entropy (label_smoothing={smoothing}) from logits."
    elif kind == "nll":
        expr = f'F.nll_loss(log_probs, target, reduction="{reduction}")'
        inputs, args = [f"torch.log_softmax({logits}, dim=1)", labels], "log_probs, target"
        doc = "NLL loss on log-probabilities."
    elif kind in ("mse", "l1", "smooth_l1", "huber", "soft_margin"):
        opt = {"smooth_l1": f", beta={rng.choice([1.0, 0.5, 0.1])}",
               "huber": f", delta={rng.choice([1.0, 2.0, 0.5])}"}.get(kind, "")
        fn = {"mse": "mse_loss", "l1": "l1_loss", "smooth_l1": "smooth_l1_loss", "huber": "huber_loss",
              "soft_margin": "soft_margin_loss"}[kind]
        target = "torch.randn(batch_size, num_classes)" + (".sign()" if kind == "soft_margin" else "")
        expr = f'F.{fn}(pred, target{opt}, reduction="{reduction}")'
        inputs, args = [logits, target], "pred, target"
        doc = f"{fn}{opt.replace(',', '')} between two matrices."
    elif kind == "bce_logits":
        expr = f'F.binary_cross_entropy_with_logits(logits, target, reduction="{reduction}")'
        inputs, args = [logits, "(torch.rand(batch_size, num_classes) < 0.1).float()"], "logits, target"
        doc = "Binary cross-entropy with logits on multi-label targets."
    elif kind == "kl_div":
        log_target = rng.random() < 0.5
        red = "batchmean" if reduction == "mean" else reduction
        tgt = "torch.log_softmax(torch.randn(batch_size, num_classes), dim=1)" if log_target else \
            "torch.softmax(torch.randn(batch_size, num_classes), dim=1)"
        expr = f'F.kl_div(log_pred, target, reduction="{red}", log_target={log_target})'
        inputs, args = [f"torch.log_softmax({logits}, dim=1)", tgt], "log_pred, target"
        doc = f"KL divergence (log_target={log_target})."
    elif kind == "margin_ranking":
        margin = rng.choice([0.0, 0.1, 0.5])
        expr = f'F.margin_ranking_loss(s1, s2, y, margin={margin}, reduction="{reduction}")'
        inputs = ["torch.randn(batch_size * num_classes)", "torch.randn(batch_size * num_classes)",
                  "torch.randint(0, 2, (batch_size * num_classes,)).float() * 2 - 1"]
        args, doc = "s1, s2, y", f"Margin ranking loss (margin {margin}) on flattened score pairs."
    elif kind == "cosine_embedding":
        margin = rng.choice([0.0, 0.2])
        expr = f'F.cosine_embedding_loss(a, b, y, margin={margin}, reduction="{reduction}")'
        inputs = ["torch.randn(batch_size, num_classes)", "torch.randn(batch_size, num_classes)",
                  "torch.randint(0, 2, (batch_size,)).float() * 2 - 1"]
        args, doc = "a, b, y", f"Cosine embedding loss (margin {margin})."
    else:
        margin, p = rng.choice([1.0, 0.3]), rng.choice([1.0, 2.0])
        expr = f'F.triplet_margin_loss(anchor, positive, negative, margin={margin}, p={p}, reduction="{reduction}")'
        inputs = ["torch.randn(batch_size, num_classes)"] * 3
        args, doc = "anchor, positive, negative", f"Triplet margin loss (margin {margin}, p={p})."
    body = f'''

class Model(nn.Module):
    def forward(self, {args}):
        return {expr}
''' + _inputs_fn([f"return [{', '.join(inputs)}]"]) + _init_fn()
    return Draft(f"{kind}_{reduction}", doc.rstrip(".") + f", reduction={reduction}.", sizes, body)


def gen_attention(rng: random.Random) -> Draft:
    sizes = {"batch_size": _size(rng, 16, 64), "num_heads": rng.choice([4, 8, 12, 16, 32]),
             "seq_len": _size(rng, 128, 2048), "head_dim": rng.choice([32, 64, 64, 128])}
    _fit(sizes, ["batch_size", "num_heads", "seq_len", "head_dim"], MAX_TENSOR_ELEMS // 2, floor=4)
    _fit(sizes, ["batch_size", "num_heads", "seq_len", "seq_len"], MAX_TENSOR_ELEMS * 4, floor=4)
    dtype = _dtype(rng)
    dt = _dt(dtype)
    kind = rng.choice(["sdpa", "sdpa_causal", "sdpa_mask", "manual", "manual_causal"])
    qkv = [f"torch.randn(batch_size, num_heads, seq_len, head_dim, {dt})"] * 3
    if kind.startswith("sdpa"):
        opt = ", is_causal=True" if kind == "sdpa_causal" else ", attn_mask=mask" if kind == "sdpa_mask" else ""
        args = "q, k, v, mask" if kind == "sdpa_mask" else "q, k, v"
        inputs = qkv + (["torch.rand(batch_size, 1, 1, seq_len) > 0.2"] if kind == "sdpa_mask" else [])
        body = f'''

class Model(nn.Module):
    def forward(self, {args}):
        return F.scaled_dot_product_attention(q, k, v{opt})
''' + _inputs_fn([f"return [{', '.join(inputs)}]"]) + _init_fn()
        what = {"sdpa": "without a mask", "sdpa_causal": "with is_causal=True", "sdpa_mask": "with a boolean key mask"}[kind]
        return Draft(f"{kind}_{dtype}", f"scaled_dot_product_attention {what}, {dtype}.", sizes, body)
    if kind == "manual":
        body = '''

class Model(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5
        return torch.softmax(scores, dim=-1) @ v
''' + _inputs_fn([f"return [{', '.join(qkv)}]"]) + _init_fn()
        return Draft(f"manual_softmax_qk_v_{dtype}", f"softmax(QK^T / sqrt(d)) V by hand, {dtype}.", sizes, body)
    body = '''

class Model(nn.Module):
    def __init__(self, max_len):
        super().__init__()
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, q, k, v):
        T = q.size(-2)
        scores = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
''' + _inputs_fn([f"return [{', '.join(qkv)}]"]) + _init_fn("seq_len")
    return Draft(f"manual_causal_{dtype}", f"Causal attention by hand with a sliced mask buffer, {dtype}.", sizes, body)


_FUSED_ACTS = ["torch.relu", "F.gelu", "F.silu", "torch.tanh", "torch.sigmoid", "F.hardswish", "F.mish"]


def gen_fused(rng: random.Random) -> Draft:
    act = rng.choice(_FUSED_ACTS)
    if rng.random() < 0.5:
        sizes = {"batch_size": _size(rng, 256, 8192), "in_features": _size(rng, 256, 4096),
                 "out_features": _size(rng, 256, 4096)}
        _fit(sizes, ["batch_size", "in_features"], MAX_TENSOR_ELEMS, floor=64)
        _fit(sizes, ["in_features", "out_features"], MAX_TENSOR_ELEMS // 2, floor=64)
        norm = rng.choice(["none", "layernorm", "batchnorm"])
        tail = rng.choice(["none", "scale", "residual_mean", "dropout"])
        layers = ["self.fc = nn.Linear(in_features, out_features)"]
        steps = ["y = self.fc(x)"]
        if norm == "layernorm":
            layers.append("self.norm = nn.LayerNorm(out_features)")
            steps.append("y = self.norm(y)")
        elif norm == "batchnorm":
            layers.append("self.norm = nn.BatchNorm1d(out_features)")
            steps.append("y = self.norm(y)")
        steps.append(f"y = {act}(y)")
        if tail == "scale":
            steps.append(f"y = y * {rng.choice([0.5, 2.0, 0.1])}")
        elif tail == "residual_mean":
            steps.append("y = y + x.mean(dim=1, keepdim=True)")
        elif tail == "dropout":
            layers.append("self.drop = nn.Dropout(0.1)")
            steps.append("y = self.drop(y)")
        init = "\n        ".join(layers)
        fwd = "\n        ".join(steps)
        body = f'''

class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        {init}

    def forward(self, x):
        {fwd}
        return y
''' + _inputs_fn(["return [torch.randn(batch_size, in_features)]"]) + _init_fn("in_features, out_features")
        chain = " -> ".join(["Linear"] + ([norm] if norm != "none" else []) + [act.split(".")[-1]] +
                            ([tail] if tail != "none" else []))
        return Draft(f"linear_{norm}_{act.split('.')[-1]}", f"Fused chain: {chain}.", sizes, body)
    sizes = {"batch_size": _size(rng, 16, 64), "in_channels": _size(rng, 32, 256), "out_channels": _size(rng, 32, 256)}
    side = _size(rng, 32, 224)
    sizes.update({"height": side, "width": side})
    _fit(sizes, ["batch_size", "in_channels", "height", "width"], MAX_TENSOR_ELEMS, floor=16)
    _fit(sizes, ["batch_size", "out_channels", "height", "width"], MAX_TENSOR_ELEMS, floor=16)
    norm = rng.choice(["batchnorm", "groupnorm", "none"])
    pool = rng.choice(["maxpool", "avgpool", "none"])
    k = rng.choice([1, 3, 5])
    layers = [f"self.conv = nn.Conv2d(in_channels, out_channels, {k}, padding={k // 2}, bias={norm == 'none'})"]
    steps = ["y = self.conv(x)"]
    if norm == "batchnorm":
        layers.append("self.norm = nn.BatchNorm2d(out_channels)")
        steps.append("y = self.norm(y)")
    elif norm == "groupnorm":
        groups = rng.choice([g for g in (4, 8, 16) if sizes["out_channels"] % g == 0] or [1])
        layers.append(f"self.norm = nn.GroupNorm({groups}, out_channels)")
        steps.append("y = self.norm(y)")
    steps.append(f"y = {act}(y)")
    if pool == "maxpool":
        steps.append("y = F.max_pool2d(y, 2)")
    elif pool == "avgpool":
        steps.append("y = F.avg_pool2d(y, 2)")
    init = "\n        ".join(layers)
    fwd = "\n        ".join(steps)
    body = f'''

class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        {init}

    def forward(self, x):
        {fwd}
        return y
''' + _inputs_fn(["return [torch.randn(batch_size, in_channels, height, width)]"]) + _init_fn("in_channels, out_channels")
    chain = " -> ".join([f"Conv2d {k}x{k}"] + ([norm] if norm != "none" else []) + [act.split(".")[-1]] +
                        ([pool] if pool != "none" else []))
    return Draft(f"conv_{norm}_{act.split('.')[-1]}_{pool}", f"Fused chain: {chain}.", sizes, body, [("height", "width")])


CLASSES: dict[str, Callable[[random.Random], Draft]] = {
    "pointwise": gen_pointwise,
    "activation": gen_activation,
    "reduction": gen_reduction,
    "matmul": gen_matmul,
    "convolution": gen_convolution,
    "conv_transpose": gen_conv_transpose,
    "pooling": gen_pooling,
    "normalization": gen_normalization,
    "softmax": gen_softmax,
    "scan": gen_scan,
    "index": gen_index,
    "layout": gen_layout,
    "loss": gen_loss,
    "attention": gen_attention,
    "fused": gen_fused,
}


def render(draft: Draft, seed: int) -> str:
    """The spec source of ``draft``: docstring, imports, size constants, then the body."""
    lines = [f'"""{draft.doc.rstrip(".")} (random spec, seed {seed})."""', "", "import torch", "import torch.nn as nn"]
    if "F." in draft.body:
        lines.append("import torch.nn.functional as F")
    lines.append("")
    groups = {group[0]: group for group in draft.chained if len({draft.sizes[n] for n in group}) == 1}
    skip = {name for group in groups.values() for name in group[1:]}
    for name, value in draft.sizes.items():
        if name in groups:
            lines.append(" = ".join(groups[name]) + f" = {value}")
        elif name not in skip:
            lines.append(f"{name} = {value}")
    return "\n".join(lines) + "\n" + draft.body


def generate_specs(seed: int, per_class: int, classes: Sequence[str] | None = None) -> list[GeneratedSpec]:
    """``per_class`` specs for every class in CLASSES (or only ``classes``), numbered in class
    order; deterministic for ``seed``, and a class's specs are the same whichever others are
    written beside them (each is drawn from its own seeded generator)."""
    unknown = sorted(set(classes or ()) - set(CLASSES))
    if unknown:
        raise ValueError(f"unknown operator classes {unknown}; known: {sorted(CLASSES)}")
    specs: list[GeneratedSpec] = []
    number = 1
    for op_class, make in CLASSES.items():
        if classes and op_class not in classes:
            continue
        for i in range(per_class):
            rng = random.Random(f"{seed}:{op_class}:{i}")
            draft = make(rng)
            slug = "".join(c if c.isalnum() or c == "_" else "_" for c in draft.slug.lower()).strip("_")
            specs.append(GeneratedSpec(f"{number:03d}_{op_class}_{slug}.py", op_class, render(draft, seed)))
            number += 1
    return specs


def write_specs(out: Path, seed: int, per_class: int, clean: bool = False,
                classes: Sequence[str] | None = None) -> list[Path]:
    """Write the generated specs and their ``classes.txt`` manifest into ``out``; return the spec paths.

    ``clean`` first removes the ``*.py`` files and manifest a previous run left in ``out``.
    """
    out.mkdir(parents=True, exist_ok=True)
    if clean:
        for old in out.glob("*.py"):
            old.unlink()
        (out / "classes.txt").unlink(missing_ok=True)
    specs = generate_specs(seed, per_class, classes)
    paths = []
    for spec in specs:
        path = out / spec.name
        path.write_text(spec.source)
        paths.append(path)
    manifest = [f"# spec file, operator class (written by bench/corpus/random_specs.py, seed {seed}, "
                f"{per_class} per class)"]
    manifest += [f"{spec.name} {spec.op_class}" for spec in specs]
    (out / "classes.txt").write_text("\n".join(manifest) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the specs and classes.txt into")
    parser.add_argument("--per-class", type=int, default=4, help="specs per operator class")
    parser.add_argument("--seed", type=int, default=2026, help="random seed (same seed, same files)")
    parser.add_argument("--clean", action="store_true", help="remove earlier *.py and classes.txt in --out first")
    parser.add_argument("--classes", nargs="+", choices=sorted(CLASSES), metavar="CLASS",
                        help=f"only these operator classes (of: {', '.join(CLASSES)})")
    args = parser.parse_args(argv)
    if args.per_class < 1:
        parser.error("--per-class must be at least 1")
    paths = write_specs(args.out, args.seed, args.per_class, clean=args.clean, classes=args.classes)
    count = len(args.classes) if args.classes else len(CLASSES)
    print(f"wrote {len(paths)} specs ({count} classes x {args.per_class}) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
