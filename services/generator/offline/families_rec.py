"""Context builders for the recommendation-model templates, which match the raw fx graph.

These ops (searchsorted-based MapId, bucketize, segment_reduce) are integer/index
computations the pointwise IR does not model, so their builders read the traced graph
directly: find the key node, check the surrounding pattern means what the template
computes, and name the tensors it reads.
"""
from __future__ import annotations

from typing import Any

from services.generator.offline.ops import Unsupported
from services.generator.offline.specparts import SpecParts

_DROP = {"import torch", "import torch.nn as nn", "import triton", "import triton.language as tl"}


def _common(parts: SpecParts, tunables: dict[str, str], title: str) -> dict[str, Any]:
    return {"title": title, "imports": "\n".join(x for x in parts.imports.splitlines() if x not in _DROP),
            "init_source": parts.init_source, "forward_params": parts.forward_params,
            "tunables_text": ", ".join(f"{k}={v}" for k, v in tunables.items()), **tunables}


def _nodes(traced: dict[str, Any]) -> dict[str, dict[str, Any]]:
    table = {n["name"]: {"op": "placeholder", **n} for n in traced["inputs"]}
    table.update({n["name"]: n for n in traced["nodes"]})
    return table


def _only(traced: dict[str, Any], target: str) -> dict[str, Any]:
    found = [n for n in traced["nodes"] if n["target"].lstrip("_") == target]
    if len(found) != 1:
        raise Unsupported(f"expected exactly one {target} in the graph, found {len(found)}")
    return found[0]


def _expr(traced: dict[str, Any], ref: Any) -> str:
    """A tensor the kernel reads directly: a forward argument or a module attribute."""
    if not (isinstance(ref, dict) and "node" in ref):
        raise Unsupported(f"expected a tensor, got {ref!r}")
    node = _nodes(traced)[ref["node"]]
    if node["op"] == "placeholder":
        return str(node["name"])
    if node["op"] == "get_attr":
        return "self." + node["target"]
    raise Unsupported(f"{ref['node']} is computed by other ops; the template reads inputs/buffers directly")


def _output(traced: dict[str, Any]) -> dict[str, Any]:
    out = traced["output"]
    if not (isinstance(out, dict) and "node" in out):
        raise Unsupported("forward must return a single tensor")
    return _nodes(traced)[out["node"]]


def build_mapid(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    ss = _only(traced, "searchsorted")
    if ss["kwargs"].get("right") or ss["kwargs"].get("side") == "right":
        raise Unsupported("MapId with searchsorted(right=True)")
    out = _output(traced)
    # The output must be where(<eq>, searchsorted + 1, 0): position 1-based, 0 when absent.
    if out["target"] != "where" or len(out["args"]) != 3:
        raise Unsupported("MapId pattern: the output is not where(found, pos + 1, 0)")
    nodes = _nodes(traced)
    hit, pos1 = out["args"][0], out["args"][1]
    pos1_node = nodes.get(pos1["node"]) if isinstance(pos1, dict) and "node" in pos1 else None
    if (pos1_node is None or pos1_node["target"] != "add" or {"node": ss["name"]} not in pos1_node["args"]
            or 1 not in pos1_node["args"]):
        raise Unsupported("MapId pattern: the found branch is not searchsorted(...) + 1")
    if not (isinstance(hit, dict) and nodes.get(hit["node"], {}).get("target") == "eq"):
        raise Unsupported("MapId pattern: the condition is not an equality test")
    return {**_common(parts, tunables, "MapId: sorted-table lookup -> 1-based position, 0 if unknown"),
            "table_expr": _expr(traced, ss["args"][0]), "ids_expr": _expr(traced, ss["args"][1]),
            "out_dtype": out.get("dtype", "int64")}


def build_bucketize(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    node = _only(traced, "bucketize")
    if _output(traced)["name"] != node["name"]:
        raise Unsupported("bucketize followed by other ops")
    args, kwargs = node["args"], node["kwargs"]
    borders = kwargs.get("boundaries", args[1] if len(args) > 1 else None)
    right = bool(kwargs.get("right", args[3] if len(args) > 3 else False))
    return {**_common(parts, tunables, "Bucketize / border lookup"), "x_expr": _expr(traced, args[0]),
            "borders_expr": _expr(traced, borders), "right": str(right), "out_dtype": node.get("dtype", "int64")}


def build_jagged_sum(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    node = _only(traced, "segment_reduce")
    if _output(traced)["name"] != node["name"]:
        raise Unsupported("segment_reduce followed by other ops")
    args, kwargs = node["args"], node["kwargs"]
    reduce = kwargs.get("reduce", args[1] if len(args) > 1 else None)
    if reduce != "sum":
        raise Unsupported(f"segment_reduce with reduce={reduce!r} (only 'sum' is implemented)")
    if kwargs.get("axis", 0) != 0 or kwargs.get("offsets") is None:
        raise Unsupported("segment_reduce needs offsets= and axis=0 (lengths= is not implemented)")
    if kwargs.get("initial") not in (None, 0, 0.0):
        raise Unsupported("segment_reduce with a non-zero initial value")
    return {**_common(parts, tunables, "Jagged sum over offsets"), "values_expr": _expr(traced, args[0]),
            "offsets_expr": _expr(traced, kwargs["offsets"])}


REC_BUILDERS = {"mapid": build_mapid, "bucketize": build_bucketize, "jagged_sum": build_jagged_sum}
