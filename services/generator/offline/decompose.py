"""Traced functions -> IR values: pointwise ops map 1:1, composite ops are decomposed.

A mixin of the Lowerer (lower.py), which provides add/const/un/bin/red/mean/arg/tensor.
"""
from __future__ import annotations

from typing import Any

from services.generator.offline.ir import Value
from services.generator.offline.ops import BINARY, IDENTITY, UNARY, Unsupported

_REDUCE_NAMES = {"sum": "sum", "amax": "max", "amin": "min", "max": "max", "min": "min"}
_HEAVY = {"linear", "matmul", "mm", "addmm", "bmm", "conv1d", "baddbmm"}


def _kw(args: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


class Decompose:
    # Provided by the Lowerer.
    values: list[Any]
    shapes: dict[str, list[int]]
    t: dict[str, Any]

    def function(self, node: dict[str, Any], fn: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if fn in _HEAVY:
            return self.heavy_function(node, fn, args, kwargs)
        if fn in IDENTITY or (fn == "dropout" and (_kw(args, kwargs, 1, "p", 0.5) == 0 or not _kw(args, kwargs, 2, "training", True))):
            return self.materialize(self.arg(args[0]))
        if fn == "dropout":
            raise Unsupported("dropout with p > 0 in training mode is random; no deterministic kernel can match it")
        if fn == "getattr" and len(args) == 2 and args[1] == "shape":
            return ("shape", args[0])
        if fn == "getattr" and len(args) == 2 and args[1] in ("dtype", "device", "layout"):
            # Only ever an argument of .to()/.type() (which keep fp32 compute; the store casts
            # to the traced output dtype), never a value the kernel computes with.
            return ("meta", args[1])
        if fn in ("transpose", "t", "permute", "swapaxes", "mT"):
            return self.view_of(node, fn, args, kwargs)
        if fn == "getitem":
            src = self.arg(args[0])
            if isinstance(src, tuple) and src[0] == "shape" and isinstance(args[1], int):
                shape = self.shapes.get(src[1]["node"], []) if isinstance(src[1], dict) else []
                if args[1] == -1 or args[1] == len(shape) - 1:
                    return ("pyconst", "N")
                raise Unsupported("x.shape[i] other than the last dimension")
            if isinstance(src, tuple) and src[0] == "tuple" and isinstance(args[1], int):
                return src[1][args[1]]
            raise Unsupported("indexing/slicing a tensor")
        if fn == "size":
            dim = _kw(args, kwargs, 1, "dim")
            shape = self.shapes.get(args[0]["node"], []) if isinstance(args[0], dict) else []
            if dim is not None and (dim == -1 or dim == len(shape) - 1):
                return ("pyconst", "N")
            raise Unsupported("x.size() other than the last dimension")
        if fn in ("softmax", "log_softmax"):
            self.last_dim(node, _kw(args, kwargs, 1, "dim"), args[0])
            x = self.tensor(args[0])
            m = self.red("max", x)
            e = self.un("exp", self.bin("sub", x, m))
            s = self.red("sum", e)
            if fn == "softmax":
                return self.bin("div", e, s)
            return self.bin("sub", self.bin("sub", x, m), self.un("log", s))
        if fn == "logsumexp":
            self.last_dim(node, _kw(args, kwargs, 1, "dim"), args[0])
            self.keepdim_ok(node, _kw(args, kwargs, 2, "keepdim", False))
            x = self.tensor(args[0])
            m = self.red("max", x)
            return self.bin("add", m, self.un("log", self.red("sum", self.un("exp", self.bin("sub", x, m)))))
        if fn in ("sum", "mean", "amax", "amin", "max", "min", "var", "std", "norm"):
            return self.reduction(node, fn, args, kwargs)
        if fn == "layer_norm":
            w, b = _kw(args, kwargs, 2, "weight"), _kw(args, kwargs, 3, "bias")
            return self.layer_norm_fn(node, args[0], _kw(args, kwargs, 1, "normalized_shape"), w, b,
                                      _kw(args, kwargs, 4, "eps", 1e-5))
        if fn == "rms_norm":
            return self.rms_norm_fn(node, args[0], _kw(args, kwargs, 1, "normalized_shape"),
                                    _kw(args, kwargs, 2, "weight"), _kw(args, kwargs, 3, "eps"))
        if fn == "where":
            c, a, b = (self.tensor(_kw(args, kwargs, i, n)) for i, n in enumerate(("condition", "input", "other")))
            return self.add(self.value_cls()(op="where", fn="where", args=[c, a, b]))
        if fn in ("add", "sub", "rsub"):
            a, b = self.tensor(args[0]), self.tensor(_kw(args, kwargs, 1, "other"))
            alpha = kwargs.get("alpha", 1)
            if alpha != 1:
                b = self.bin("mul", b, self.const(alpha))
            if fn == "rsub":
                a, b = b, a
            return self.bin("add" if fn == "add" else "sub", a, b)
        if fn in ("div",) and kwargs.get("rounding_mode") is not None:
            raise Unsupported("division with a rounding_mode")
        if fn in ("pow", "float_power"):
            exponent = self.arg(_kw(args, kwargs, 1, "exponent"))
            if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
                raise Unsupported("pow with a tensor exponent")
            # The base is a tensor iff fx passed a node; self.arg() of a node may be an int
            # (an SSA value id), so the python type of the decoded value says nothing.
            if not (isinstance(args[0], dict) and "node" in args[0]):
                raise Unsupported("pow with a scalar base")
            x = self.tensor(args[0])
            if exponent in (2, 3, 4):
                return self.un(f"powi{int(exponent)}", x)
            if exponent == 1:
                return x
            if exponent == 0.5:
                return self.un("sqrt", x)
            if exponent == -0.5:
                return self.un("rsqrt", x)
            if exponent == -1:
                return self.un("reciprocal", x)
            return self.un("pow_const", x, exponent=exponent)
        if fn in BINARY:
            return self.bin(fn, self.tensor(args[0]), self.tensor(_kw(args, kwargs, 1, "other")))
        if fn in ("clamp", "clamp_min", "clamp_max", "hardtanh"):
            lo = _kw(args, kwargs, 1, "min", kwargs.get("min_val", -1.0 if fn == "hardtanh" else None))
            hi = _kw(args, kwargs, 2, "max", kwargs.get("max_val", 1.0 if fn == "hardtanh" else None))
            if fn == "clamp_max":
                lo, hi = None, _kw(args, kwargs, 1, "max")
            x = self.tensor(args[0])
            if isinstance(lo, dict) or isinstance(hi, dict):
                raise Unsupported("clamp with tensor bounds")
            if lo is not None:
                x = self.un("clamp_min", x, min_val=lo)
            if hi is not None:
                x = self.un("clamp_max", x, max_val=hi)
            return x
        if fn == "gelu":
            approx = _kw(args, kwargs, 1, "approximate", "none")
            return self.un("gelu_tanh" if approx == "tanh" else "gelu", self.tensor(args[0]))
        if fn == "leaky_relu":
            return self.un(fn, self.tensor(args[0]), negative_slope=_kw(args, kwargs, 1, "negative_slope", 0.01))
        if fn == "elu":
            return self.un(fn, self.tensor(args[0]), alpha=_kw(args, kwargs, 1, "alpha", 1.0))
        if fn == "softplus":
            return self.un(fn, self.tensor(args[0]), beta=_kw(args, kwargs, 1, "beta", 1.0),
                           threshold=_kw(args, kwargs, 2, "threshold", 20.0))
        if fn in UNARY:
            return self.un(fn, self.tensor(args[0]))
        raise Unsupported(f"operator {fn!r}")

    def view_of(self, node: dict[str, Any], fn: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """A transpose/permute of an input or parameter stays a view: GEMM operands are read
        through its strides (no copy); pointwise templates make it contiguous when they load it."""
        src = self.arg(args[0])
        if not (isinstance(src, tuple) and src[0] == "lazy"):
            raise Unsupported(f"{fn} of a computed value (only inputs and parameters can be transposed)")
        rest = [a for a in args[1:]] + [f"{k}={v!r}" for k, v in kwargs.items()]
        if not all(isinstance(a, (int, str)) or (isinstance(a, list) and all(isinstance(x, int) for x in a))
                   for a in rest):
            raise Unsupported(f"{fn} with traced dimension arguments")
        call = "mT" if fn == "mT" else f"{'transpose' if fn == 'swapaxes' else fn}({', '.join(map(str, rest))})"
        return ("lazy", f"({src[1]}).{call}", node["name"])

    def keepdim_ok(self, node: dict[str, Any], keepdim: Any) -> None:
        # A non-keepdim reduction is fine as the final output; the Program records its shape.
        return None

    def reduction(self, node: dict[str, Any], fn: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        dim = _kw(args, kwargs, 1, "dim")
        if fn == "norm":
            p = _kw(args, kwargs, 1, "p", 2)
            dim = _kw(args, kwargs, 2, "dim")
            if p not in (2, 2.0, "fro"):
                raise Unsupported(f"norm with p={p!r}")
        if fn in ("max", "min") and (dim is None or isinstance(dim, dict)):
            if isinstance(dim, dict):  # torch.max(a, b): pointwise
                return self.bin("maximum" if fn == "max" else "minimum", self.tensor(args[0]), self.tensor(dim))
            raise Unsupported(f"{fn} over all elements (only last-dim reductions are implemented)")
        self.last_dim(node, dim, args[0])
        x = self.tensor(args[0])
        if fn in _REDUCE_NAMES:
            r = self.red(_REDUCE_NAMES[fn], x)
            if fn in ("max", "min"):  # returns (values, indices); only values are implemented
                return ("tuple", [r, ("no-indices",)])
            return r
        if fn == "mean":
            return self.mean(x)
        if fn == "norm":
            return self.un("sqrt", self.red("sum", self.un("square", x)))
        correction = kwargs.get("correction", 0 if kwargs.get("unbiased") is False else 1)
        if len(args) > 2 and isinstance(args[2], bool):
            correction = 1 if args[2] else 0
        centered = self.bin("sub", x, self.mean(x))
        ss = self.red("sum", self.un("square", centered))
        var = self.bin("div", ss, self.const(f"(N - {float(correction)})"))
        return var if fn == "var" else self.un("sqrt", var)

    def norm_shape_ok(self, node: dict[str, Any], shape: Any, x: Any) -> None:
        if not isinstance(shape, (list, tuple)) or len(shape) != 1:
            raise Unsupported(f"{node['target']} over normalized_shape={shape!r} (only the last dimension is implemented)")

    def layer_norm_fn(self, node: dict[str, Any], x_ref: Any, shape: Any, w: Any, b: Any, eps: float) -> int:
        self.norm_shape_ok(node, shape, x_ref)
        self.last_dim(node, -1, x_ref)
        x = self.tensor(x_ref)
        xc = self.bin("sub", x, self.mean(x))
        var = self.bin("div", self.red("sum", self.un("square", xc)), self.const("N"))
        y = self.bin("mul", xc, self.un("rsqrt", self.bin("add", var, self.const(eps))))
        if w is not None:
            y = self.bin("mul", y, self.tensor(w))
        if b is not None:
            y = self.bin("add", y, self.tensor(b))
        return y

    def rms_norm_fn(self, node: dict[str, Any], x_ref: Any, shape: Any, w: Any, eps: Any) -> int:
        self.norm_shape_ok(node, shape, x_ref)
        self.last_dim(node, -1, x_ref)
        if eps is None:  # torch uses the input dtype's epsilon
            dtype = self.dtypes.get(x_ref["node"], "float32") if isinstance(x_ref, dict) else "float32"
            eps = {"float16": 0.0009765625, "bfloat16": 0.0078125}.get(dtype, 1.1920928955078125e-07)
        x = self.tensor(x_ref)
        ms = self.mean(self.un("square", x))
        y = self.bin("mul", x, self.un("rsqrt", self.bin("add", ms, self.const(eps))))
        return self.bin("mul", y, self.tensor(w)) if w is not None else y

    def layer_norm(self, node: dict[str, Any], x: Any, shape: Any, expr: str | None, has_bias: bool,
                   eps: float) -> int:
        w = self.param_ref(expr + ".weight") if expr else None
        b = self.param_ref(expr + ".bias") if expr and has_bias else None
        return self.layer_norm_fn(node, x, shape, w, b, eps)

    def rms_norm(self, node: dict[str, Any], x: Any, shape: Any, expr: str | None, eps: Any) -> int:
        w = self.param_ref(expr + ".weight") if expr else None
        return self.rms_norm_fn(node, x, shape, w, eps)

    def heavy_function(self, node: dict[str, Any], fn: str, args: list[Any], kwargs: dict[str, Any]) -> int:
        if fn == "linear":
            return self.heavy_op("linear", node, args[0], _kw(args, kwargs, 1, "weight"),
                                 _kw(args, kwargs, 2, "bias"), b_transposed=True)
        if fn == "conv1d":
            return self.conv1d(node, args[0], _kw(args, kwargs, 1, "weight"), _kw(args, kwargs, 2, "bias"),
                               _kw(args, kwargs, 3, "stride", 1), _kw(args, kwargs, 4, "padding", 0),
                               _kw(args, kwargs, 5, "dilation", 1), _kw(args, kwargs, 6, "groups", 1))
        if fn == "addmm":
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            return self.heavy_op("mm", node, args[1], args[2], args[0], beta=float(beta), alpha=float(alpha))
        if fn == "baddbmm":
            raise Unsupported("baddbmm")
        a_shape = self.shapes.get(args[0]["node"], []) if isinstance(args[0], dict) else []
        b_shape = self.shapes.get(args[1]["node"], []) if isinstance(args[1], dict) else []
        if len(a_shape) == 3 and len(b_shape) == 3:
            return self.heavy_op("bmm", node, args[0], args[1])
        if len(a_shape) >= 2 and len(b_shape) == 2:
            return self.heavy_op("mm", node, args[0], args[1])
        raise Unsupported(f"{fn} of shapes {a_shape} x {b_shape}")

    def conv1d(self, node: dict[str, Any], x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any,
               groups: Any) -> int:
        def one(v: Any) -> int:
            v = v[0] if isinstance(v, (list, tuple)) else v
            if not isinstance(v, int):
                raise Unsupported(f"conv1d parameter {v!r}")
            return v
        if groups != 1:
            raise Unsupported("grouped conv1d (groups != 1)")
        conv = {"stride": one(stride), "padding": one(padding), "dilation": one(dilation)}
        return self.heavy_op("conv1d", node, x, w, b, conv=conv)

    def value_cls(self) -> Any:
        return Value
