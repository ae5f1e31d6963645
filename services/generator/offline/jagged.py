"""Recognise a jagged "keep the last (or first) K events of every segment" gather.

The eager spelling builds an index tensor from the offsets (lengths, clamp, exclusive
cumsum, repeat_interleave, arange) and gathers `values[..., src]`. Rather than matching one
spelling op by op, the graph is run on an abstract domain: every index value is a linear
form over a few per-segment quantities (hi = offsets[1:], lo = offsets[:-1], keep =
clamp(hi - lo, max=K), incl = cumsum(keep)), either per segment or broadcast to every output
element through `[row]` indexing (suffix "@row"), plus t = the output position. The gather
is a truncation iff src == hi@row - keep@row + (t - excl@row) (the last keep events; excl =
incl - keep) or lo@row + (t - excl@row) (the first ones), whatever order the ops came in.
"""
from __future__ import annotations

from typing import Any

from services.generator.offline.ops import Unsupported

Form = dict[str, int]
_LAST: Form = {"hi@row": 1, "t": 1, "incl@row": -1}                 # hi - keep + (t - incl + keep)
_FIRST: Form = {"lo@row": 1, "t": 1, "incl@row": -1, "keep@row": 1}  # lo + (t - incl + keep)


def _combine(a: Form, b: Form, sign: int) -> Form:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v}


class _Abstract:
    def __init__(self, traced: dict[str, Any]) -> None:
        self.t = traced
        self.env: dict[str, tuple[Any, ...]] = {}
        self.offsets: str | None = None
        self.k: int | None = None

    def get(self, ref: Any) -> tuple[Any, ...]:
        if isinstance(ref, dict) and "node" in ref:
            return self.env.get(ref["node"], ("opaque", ref["node"]))
        return ("const", ref)

    def run(self) -> tuple[str, str, str]:
        """(values placeholder, offsets placeholder, "last" | "first") or Unsupported."""
        for inp in self.t["inputs"]:
            self.env[inp["name"]] = ("input", inp["name"])
        for node in self.t["nodes"]:
            self.env[node["name"]] = self.step(node)
        out = self.t["output"]
        node = next((n for n in self.t["nodes"] if isinstance(out, dict) and n["name"] == out.get("node")), None)
        if node is None or node["target"] != "getitem":
            raise Unsupported("jagged truncate pattern: the output is not values[..., src]")
        values, index = node["args"]
        src = index[-1] if isinstance(index, list) else index
        lead = index[:-1] if isinstance(index, list) else []
        if any(x != {"slice": [None, None, None]} for x in lead) or self.get(values)[0] != "input":
            raise Unsupported("jagged truncate pattern: the gather is not values[:, ..., src] of an input")
        shape = next((i["shape"] for i in self.t["inputs"] if i["name"] == self.get(values)[1]), [])
        if len(shape) != len(lead) + 1:
            raise Unsupported("jagged truncate pattern: src must index the last axis of values")
        kind, form = self.get(src)[0], self.get(src)[-1]
        if kind != "elem" or form not in (_LAST, _FIRST) or self.offsets is None:
            raise Unsupported("jagged truncate pattern: the source index is not the last/first K of each segment")
        return str(self.get(values)[1]), self.offsets, "last" if form == _LAST else "first"

    def step(self, node: dict[str, Any]) -> tuple[Any, ...]:
        target, args, kwargs = node["target"].lstrip("_"), node["args"], node["kwargs"]
        a = [self.get(x) for x in args]
        if target == "getattr":
            return ("meta",)
        if target == "getitem" and a[0][0] == "input" and isinstance(args[1], dict) and "slice" in args[1]:
            part = {"[1, None, None]": "hi", "[None, -1, None]": "lo"}.get(str(args[1]["slice"]))
            if part and self.offsets in (None, a[0][1]):
                self.offsets = a[0][1]
                return ("seg", {part: 1})
        if target == "getitem" and a[0][0] == "seg" and a[1][0] == "row":
            return ("elem", {k + "@row": v for k, v in a[0][1].items()})
        if target in ("add", "sub") and len(a) == 2 and a[0][0] == a[1][0] and a[0][0] in ("seg", "elem"):
            return (a[0][0], _combine(a[0][1], a[1][1], 1 if target == "add" else -1))
        if target in ("clamp", "clamp_max") and a[0] == ("seg", {"hi": 1, "lo": -1}):
            hi = kwargs.get("max", args[2] if target == "clamp" and len(args) > 2 else args[1] if len(args) > 1 else None)
            lo = kwargs.get("min", args[1] if target == "clamp" and len(args) > 1 else None)
            if isinstance(hi, int) and not isinstance(hi, bool) and lo in (None, 0) and self.k in (None, hi):
                self.k = hi
                return ("seg", {"keep": 1})
        if target == "cumsum" and a[0] == ("seg", {"keep": 1}) and kwargs.get("dim", args[1] if len(args) > 1 else None) == 0:
            return ("seg", {"incl": 1})
        if target == "numel" and a[0][0] == "seg":
            return ("count", "B")
        if target == "numel" and a[0][0] == "row":
            return ("count", "T")
        if target == "arange" and len(args) == 1 and a[0][0] == "count":
            return ("ids",) if a[0][1] == "B" else ("elem", {"t": 1})
        if target == "repeat_interleave" and len(a) == 2 and a[0] == ("ids",) and a[1] == ("seg", {"keep": 1}):
            return ("row",)
        return ("opaque", node["name"])


def build_jagged_truncate(traced: dict[str, Any], parts: Any, tunables: dict[str, str],
                          common: Any) -> dict[str, Any]:
    ab = _Abstract(traced)
    values, offsets, which = ab.run()
    if ab.k is None:
        raise Unsupported("jagged truncate pattern: no clamp(max=K) of the segment lengths")
    # K was a python number when traced; if it is a scalar attribute of the model (an init
    # argument such as max_len) the candidate reads the attribute, so other sizes work too.
    names = [k for k, v in traced.get("attrs", {}).items() if v == ab.k and isinstance(v, int)]
    if len(names) > 1:
        raise Unsupported(f"jagged truncate pattern: K={ab.k} matches several attributes {names}")
    out = traced["output"]
    dtype = next(n.get("dtype", "int64") for n in traced["nodes"] if n["name"] == out["node"])
    return {**common(parts, tunables, f"Jagged truncate: keep the {which} K events of every segment"),
            "values_expr": values, "offsets_expr": offsets, "k_expr": f"self.{names[0]}" if names else str(ab.k),
            "from_end": str(which == "last"), "out_dtype": dtype}
