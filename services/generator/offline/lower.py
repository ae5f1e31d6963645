"""Lower a traced fx graph (tracer.py's JSON) to the IR the templates render.

The IR is a list of SSA values over one 2-D "tile" view of the problem: rows x last dim.
A value is `row` kind (one per element), `col` kind (one per row: a last-dim reduction
kept as [M, 1]) or `scalar`. High-level ops (softmax, layer_norm, rms_norm, var, ...) are
decomposed into pointwise ops and three reductions (sum/max/min), which is what lets one
template family handle arbitrary chains instead of one template per spec. A matmul-like
op (linear, mm, addmm, bmm, conv1d) may appear once, first, and becomes the `acc` value
that the rest of the graph (its epilogue) reads.
"""
from __future__ import annotations

import math
from typing import Any

from services.generator.offline.decompose import Decompose
from services.generator.offline.ir import Heavy, Operand, Program, Value
from services.generator.offline.ops import ALIASES, MODULE_FUNCS, Unsupported

__all__ = ["Heavy", "Lowerer", "Operand", "Program", "Unsupported", "Value", "lower"]


def _num(x: float) -> str:
    if isinstance(x, bool):
        return "1.0" if x else "0.0"
    if math.isinf(x):
        return 'float("inf")' if x > 0 else '-float("inf")'
    return repr(float(x))


class Lowerer(Decompose):
    def __init__(self, traced: dict[str, Any]) -> None:
        self.t = traced
        self.operands: list[Operand] = []
        self.values: list[Value] = []
        self.env: dict[str, Any] = {}   # fx node name -> value id | tuple marker | python value
        self.heavy: Heavy | None = None
        self.reduce_axis: tuple[int, int] | None = None  # (axis, ndim of the reduced tensor)
        self.op_names: list[str] = []
        self.shapes: dict[str, list[int]] = {}
        self.dtypes: dict[str, str] = {}

    # -- value construction ---------------------------------------------------------------
    def add(self, value: Value) -> int:
        if value.op in ("unary", "binary", "where"):
            kinds = {self.values[a].kind for a in value.args}
            value.kind = "row" if "row" in kinds else ("col" if "col" in kinds else "scalar")
        self.values.append(value)
        return len(self.values) - 1

    def const(self, x: Any) -> int:
        if isinstance(x, str):
            return self.add(Value(op="const", const=x, kind="scalar"))
        if not isinstance(x, (int, float)):
            raise Unsupported(f"non-numeric constant {x!r} in a pointwise op")
        return self.add(Value(op="const", const=_num(x), kind="scalar"))

    def operand(self, expr: str, shape: list[int], dtype: str) -> int:
        self.operands.append(Operand(expr=expr, shape=list(shape), dtype=dtype))
        return len(self.operands) - 1

    def load(self, index: int) -> int:
        return self.add(Value(op="load", operand=index))

    def un(self, fn: str, a: int, **params: Any) -> int:
        return self.add(Value(op="unary", fn=fn, args=[a], params={k: _num(v) for k, v in params.items()}))

    def bin(self, fn: str, a: int, b: int) -> int:
        return self.add(Value(op="binary", fn=fn, args=[a, b]))

    def red(self, fn: str, a: int) -> int:
        if self.values[a].kind != "row":
            raise Unsupported("a reduction over an already-reduced value")
        return self.add(Value(op="reduce", fn=fn, args=[a], kind="col"))

    def mean(self, a: int) -> int:
        return self.bin("div", self.red("sum", a), self.const("N"))

    # -- argument decoding ----------------------------------------------------------------
    def arg(self, x: Any) -> Any:
        """An fx argument as a value id (tensor) or a python value."""
        if isinstance(x, dict) and "node" in x:
            got = self.env[x["node"]]
            return got
        if isinstance(x, dict) and "float" in x:
            return float(x["float"])
        return x

    def tensor(self, x: Any) -> int:
        """An fx argument as a value id: tensors are loaded on first use, numbers become constants."""
        if isinstance(x, dict) and "node" in x:
            got = self.env[x["node"]]
            if isinstance(got, tuple) and got[0] == "lazy":
                vid = self.materialize(got)
                self.env[x["node"]] = vid  # one load per tensor, however often it is read
                return vid
            if isinstance(got, tuple) and got[0] == "pyconst":
                return self.const(got[1])
            if isinstance(got, tuple):
                raise Unsupported(f"using {x['node']} (a tuple) as a tensor")
            return int(got)
        return self.const(self.arg(x))

    def last_dim(self, node: dict[str, Any], dim: Any, src: Any) -> None:
        """Record the reduced axis; every reduction of one program must share it."""
        shape = self.shapes.get(src["node"], []) if isinstance(src, dict) and "node" in src else []
        nd = len(shape)
        if isinstance(dim, (list, tuple)) and len(dim) == 1:
            dim = dim[0]
        if dim is None or not isinstance(dim, int) or not -nd <= dim < max(nd, 1):
            raise Unsupported(f"{node['target']} over dim={dim!r} (one dimension at a time is implemented)")
        axis = dim % max(nd, 1)
        if self.reduce_axis is not None and (axis, nd) != self.reduce_axis:
            raise Unsupported(f"reductions over different dimensions ({self.reduce_axis[0]} and {axis})")
        self.reduce_axis = (axis, nd)

    # -- the walk -------------------------------------------------------------------------
    def run(self) -> Program:
        for inp in self.t["inputs"]:
            if inp["kind"] != "tensor":
                raise Unsupported(f"forward argument {inp['name']!r} is not a tensor")
            self.shapes[inp["name"]] = inp["shape"]
            self.dtypes[inp["name"]] = inp["dtype"]
            self.env[inp["name"]] = ("lazy", inp["name"], inp["name"])
        for node in self.t["nodes"]:
            self.shapes[node["name"]] = node.get("shape", [])
            self.dtypes[node["name"]] = node.get("dtype", "float32")
            self.node(node)
        out = self.t["output"]
        if not (isinstance(out, dict) and "node" in out):
            raise Unsupported("forward must return a single tensor (tuples/lists are not implemented)")
        result = self.materialize(self.env[out["node"]])
        return Program(inputs=self.t["inputs"], operands=self.operands, values=self.values, out=result,
                       out_shape=self.shapes[out["node"]], out_dtype=self.dtypes[out["node"]],
                       heavy=self.heavy, reduce_axis=self.reduce_axis, op_names=self.op_names)

    def materialize(self, got: Any) -> int:
        """Placeholders/attributes are loaded only when a pointwise op reads them."""
        if isinstance(got, tuple) and got[0] == "lazy":
            _, expr, name = got
            return self.load(self.operand(expr, self.shapes[name], self.dtypes[name]))
        if isinstance(got, int) and not isinstance(got, bool):
            return got
        raise Unsupported(f"unexpected value {got!r}")

    def node(self, node: dict[str, Any]) -> None:
        name, op, target = node["name"], node["op"], node["target"]
        if op == "get_attr":
            expr = "self." + target
            self.env[name] = ("lazy", expr, name)
            return
        if op == "call_module":
            module = self.t["modules"].get(target, {})
            mtype = module.get("type", "?")
            fn = MODULE_FUNCS.get(mtype)
            if fn is None:
                raise Unsupported(f"module {target} of type nn.{mtype}")
            self.op_names.append(fn)
            self.env[name] = self.module_call(node, fn, "self." + target, module.get("attrs", {}))
            self.round_like_eager(node)
            return
        fn = ALIASES.get(target, target)
        self.op_names.append(fn)
        args = node["args"]
        kwargs = node["kwargs"]
        self.env[name] = self.function(node, fn, args, kwargs)
        self.round_like_eager(node)

    def round_like_eager(self, node: dict[str, Any]) -> None:
        """Round a half-precision op's result to its dtype, as eager PyTorch does between ops.

        Not for loads (already exact), the GEMM accumulator (a chain may still consume it),
        values already rounded (views, casts to the same dtype) or an fp16 output (the store
        rounds; a bf16 store truncates under the Triton interpreter, so bf16 outputs are rounded).
        """
        got = self.env.get(node["name"])
        dtype = node.get("dtype")
        out = self.t["output"]
        if (dtype not in ("float16", "bfloat16") or not isinstance(got, int) or isinstance(got, bool)
                or (dtype == "float16" and isinstance(out, dict) and out.get("node") == node["name"])):
            return
        v = self.values[got]
        if v.op in ("load", "const", "acc") or v.fn.startswith("round_"):
            return
        self.env[node["name"]] = self.un(f"round_{dtype}", got)

    def lazy_tensor_expr(self, x: Any) -> tuple[str, str]:
        got = self.arg(x)
        if isinstance(got, tuple) and got[0] == "lazy":
            return got[1], got[2]
        raise Unsupported("a matmul/conv operand computed by earlier ops (only inputs and parameters can feed it)")

    def chain_op(self, kind: str, node: dict[str, Any], a: Any, b: Any) -> int | None:
        """`a @ (earlier GEMM)` with nothing computed in between -> one chained GEMM.

        Associating as A (B C) keeps the small inner product (e.g. X^T Y of a factorization
        machine) on chip instead of writing it out; returns None if the pattern does not hold.
        """
        h = self.heavy
        inner = self.arg(b) if isinstance(b, dict) and "node" in b else None
        if (h is None or kind not in ("mm", "bmm") or h.kind != kind or h.bias >= 0 or h.alpha != 1.0
                or h.b_transposed or not isinstance(inner, int) or isinstance(inner, bool)
                or self.values[inner].op != "acc" or any(v.op not in ("load", "acc") for v in self.values)):
            return None
        a_expr, a_name = self.lazy_tensor_expr(a)
        ia = self.operand(a_expr, self.shapes[a_name], self.dtypes[a_name])
        self.heavy = Heavy(kind=kind + "_chain", a=ia, b=h.a, c=h.b, out_shape=node.get("shape", []))
        self.values[inner].fn = self.heavy.kind
        return inner

    def heavy_op(self, kind: str, node: dict[str, Any], a: Any, b: Any, bias: Any = None,
                 b_transposed: bool = False, **extra: Any) -> int:
        if bias is None and not b_transposed and not extra:
            chained = self.chain_op(kind, node, a, b)
            if chained is not None:
                return chained
        if self.heavy is not None or any(v.op != "load" for v in self.values):
            raise Unsupported(f"{node['target']} after other computation (only a leading matmul/conv with an epilogue is implemented)")
        a_expr, a_name = self.lazy_tensor_expr(a)
        b_expr, b_name = self.lazy_tensor_expr(b)
        ia = self.operand(a_expr, self.shapes[a_name], self.dtypes[a_name])
        ib = self.operand(b_expr, self.shapes[b_name], self.dtypes[b_name])
        ibias = -1
        if bias is not None:
            c_expr, c_name = self.lazy_tensor_expr(bias)
            ibias = self.operand(c_expr, self.shapes[c_name], self.dtypes[c_name])
        self.heavy = Heavy(kind=kind, a=ia, b=ib, bias=ibias, b_transposed=b_transposed,
                           out_shape=node.get("shape", []), **extra)
        return self.add(Value(op="acc", fn=kind))

    def module_call(self, node: dict[str, Any], fn: str, expr: str, attrs: dict[str, Any]) -> Any:
        x = node["args"][0] if node["args"] else None
        if fn == "linear":
            bias = ("lazy", expr + ".bias", None) if attrs.get("has_bias") else None
            self.shapes[expr + ".weight"] = self.t["params"][expr[5:] + ".weight"]["shape"]
            self.dtypes[expr + ".weight"] = self.t["params"][expr[5:] + ".weight"]["dtype"]
            self.env[expr + ".weight"] = ("lazy", expr + ".weight", expr + ".weight")
            bias_ref = None
            if bias:
                self.shapes[expr + ".bias"] = self.t["params"][expr[5:] + ".bias"]["shape"]
                self.dtypes[expr + ".bias"] = self.t["params"][expr[5:] + ".bias"]["dtype"]
                self.env[expr + ".bias"] = ("lazy", expr + ".bias", expr + ".bias")
                bias_ref = {"node": expr + ".bias"}
            return self.heavy_op("linear", node, x, {"node": expr + ".weight"}, bias_ref, b_transposed=True)
        if fn == "conv1d":
            kw = {"weight": {"node": expr + ".weight"}, "bias": None}
            for p in ("weight", "bias"):
                key = expr[5:] + "." + p
                if key in self.t["params"]:
                    self.shapes[expr + "." + p] = self.t["params"][key]["shape"]
                    self.dtypes[expr + "." + p] = self.t["params"][key]["dtype"]
                    self.env[expr + "." + p] = ("lazy", expr + "." + p, expr + "." + p)
                    kw[p] = {"node": expr + "." + p}
            if attrs.get("padding_mode", "zeros") != "zeros" or isinstance(attrs.get("padding"), str):
                raise Unsupported("conv1d with non-zero padding_mode or string padding")
            return self.conv1d(node, x, kw["weight"], kw["bias"], attrs.get("stride", [1]),
                               attrs.get("padding", [0]), attrs.get("dilation", [1]), attrs.get("groups", 1))
        if fn == "layer_norm":
            shape = attrs.get("normalized_shape", [])
            w = ("lazy", expr + ".weight", None) if attrs.get("elementwise_affine", True) else None
            return self.layer_norm(node, x, shape, expr if w else None, attrs.get("has_bias", False),
                                   attrs.get("eps", 1e-5))
        if fn == "rms_norm":
            eps = attrs.get("eps")
            return self.rms_norm(node, x, attrs.get("normalized_shape", []),
                                 expr if attrs.get("elementwise_affine", True) else None, eps)
        params = {k: attrs[k] for k in ("dim", "approximate", "negative_slope", "alpha", "min_val", "max_val",
                                         "beta", "threshold", "p") if k in attrs}
        return self.function(node, fn, [x], params)

    def param_ref(self, expr: str) -> dict[str, str]:
        key = expr[5:]
        self.shapes[expr] = self.t["params"][key]["shape"]
        self.dtypes[expr] = self.t["params"][key]["dtype"]
        self.env[expr] = ("lazy", expr, expr)
        return {"node": expr}


def lower(traced: dict[str, Any]) -> Program:
    return Lowerer(traced).run()
