"""Context builders for the recommendation-model templates, which match the raw fx graph.

These ops (searchsorted-based MapId, bucketize, segment_reduce) are integer/index
computations the pointwise IR does not model, so their builders read the traced graph
directly: find the key node, check the surrounding pattern means what the template
computes, and name the tensors it reads.
"""
from __future__ import annotations

from typing import Any

from services.generator.offline.jagged import build_jagged_truncate
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


_CASTS = {"float", "to", "contiguous", "type", "type_as"}


def _peel(traced: dict[str, Any], ref: Any) -> Any:
    """Follow dtype casts / .contiguous() back to the tensor they read (the kernel casts itself)."""
    nodes = _nodes(traced)
    while isinstance(ref, dict) and "node" in ref and nodes[ref["node"]].get("target") in _CASTS:
        ref = nodes[ref["node"]]["args"][0]
    return ref


def _target(traced: dict[str, Any], ref: Any) -> str:
    if not (isinstance(ref, dict) and "node" in ref):
        return ""
    return str(_nodes(traced)[ref["node"]].get("target", "")).lstrip("_")


def _offsets_of_lengths(traced: dict[str, Any], ref: Any) -> Any:
    """`offsets[1:] - offsets[:-1]` -> the offsets tensor reference, else Unsupported."""
    nodes = _nodes(traced)
    node = nodes.get(ref["node"]) if isinstance(ref, dict) and "node" in ref else None
    if node is None or node["target"] != "sub" or len(node["args"]) != 2:
        raise Unsupported("jagged pattern: the segment lengths are not offsets[1:] - offsets[:-1]")
    hi, lo = (nodes.get(a["node"]) if isinstance(a, dict) and "node" in a else None for a in node["args"])
    if not (hi and lo and hi["target"] == lo["target"] == "getitem" and hi["args"][0] == lo["args"][0]
            and hi["args"][1] == {"slice": [1, None, None]} and lo["args"][1] == {"slice": [None, -1, None]}):
        raise Unsupported("jagged pattern: the segment lengths are not offsets[1:] - offsets[:-1]")
    return hi["args"][0]


def _index_add_segments(traced: dict[str, Any], out: dict[str, Any]) -> tuple[Any, Any]:
    """zeros(B, D).index_add_(0, repeat_interleave(arange(B), lengths), values) -> (values, offsets).

    The eager spelling of a jagged sum: row r of values is added to output row segment[r],
    where segment repeats each sequence id length times, i.e. a per-sequence sum.
    """
    args = out["args"]
    if out["target"] != "index_add_" or len(args) != 4 or args[1] != 0:
        raise Unsupported("jagged pattern: the output is not index_add_(0, segment, values)")
    dest, segment, values = args[0], args[2], args[3]
    nodes = _nodes(traced)
    if _target(traced, dest) != "zeros":
        raise Unsupported("jagged pattern: index_add_ into a tensor that is not a fresh torch.zeros")
    rep = nodes.get(segment["node"]) if isinstance(segment, dict) and "node" in segment else None
    if rep is None or rep["target"] != "repeat_interleave" or len(rep["args"]) != 2:
        raise Unsupported("jagged pattern: the segment ids are not repeat_interleave(arange(B), lengths)")
    if _target(traced, rep["args"][0]) != "arange":
        raise Unsupported("jagged pattern: the repeated ids are not arange(B)")
    arange = nodes[rep["args"][0]["node"]]
    offsets = _offsets_of_lengths(traced, rep["args"][1])
    # arange(B) must count the sequences (B = lengths.numel()), so segment ids are 0..B-1.
    if len(arange["args"]) != 1 or _target(traced, arange["args"][0]) != "numel":
        raise Unsupported("jagged pattern: arange over something other than the number of sequences")
    if _offsets_of_lengths(traced, nodes[arange["args"][0]["node"]]["args"][0]) != offsets:
        raise Unsupported("jagged pattern: arange over something other than the number of sequences")
    return _peel(traced, values), offsets


def build_jagged_sum(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    out = _output(traced)
    if out["target"].lstrip("_") == "index_add_":
        values, offsets = _index_add_segments(traced, out)
        return {**_common(parts, tunables, "Jagged sum over offsets (index_add_ of repeated segment ids)"),
                "values_expr": _expr(traced, values), "offsets_expr": _expr(traced, offsets),
                "out_dtype": out.get("dtype", "float32")}
    node = _only(traced, "segment_reduce")
    if out["name"] != node["name"]:
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
            "offsets_expr": _expr(traced, kwargs["offsets"]), "out_dtype": node.get("dtype", "float32")}


_VIEWS = {"transpose", "t", "permute", "swapaxes", "mT"}


def _view_expr(traced: dict[str, Any], ref: Any) -> str:
    """An input/buffer, possibly through transposes/permutes: a strided view, never a copy."""
    nodes = _nodes(traced)
    node = nodes.get(ref["node"]) if isinstance(ref, dict) and "node" in ref else None
    if node is None or node.get("target") not in _VIEWS:
        return _expr(traced, ref)
    dims = node["args"][1:]
    if not all(isinstance(d, int) or (isinstance(d, list) and all(isinstance(x, int) for x in d)) for d in dims):
        raise Unsupported(f"{node['target']} with traced dimension arguments")
    call = "mT" if node["target"] == "mT" else f"{node['target'].replace('swapaxes', 'transpose')}({', '.join(map(str, dims))})"
    return f"({_view_expr(traced, node['args'][0])}).{call}"


def build_pair_gather(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    """out = matmul(A, B)[:, I, J] (batched) or matmul(A, B)[I, J] with 1-D integer index tensors."""
    out = _output(traced)
    if out["target"] != "getitem" or len(out["args"]) != 2 or not isinstance(out["args"][1], list):
        raise Unsupported("pair-gather pattern: the output is not product[..., I, J]")
    src, index = out["args"]
    nodes = _nodes(traced)
    prod = nodes.get(src["node"]) if isinstance(src, dict) and "node" in src else None
    if prod is None or prod["target"] not in ("bmm", "matmul") or len(prod.get("shape", [])) not in (2, 3):
        raise Unsupported("pair-gather pattern: the indexed tensor is not a (batched) matmul")
    batched = len(prod["shape"]) == 3
    if batched != (len(index) == 3) or (batched and index[0] != {"slice": [None, None, None]}):
        raise Unsupported("pair-gather pattern: the index is not [:, I, J] (batched) or [I, J]")
    i_ref, j_ref = index[-2], index[-1]
    for ref in (i_ref, j_ref):
        node = nodes.get(ref["node"]) if isinstance(ref, dict) and "node" in ref else None
        if node is None or len(node.get("shape", [])) != 1 or not str(node.get("dtype", "")).startswith("int"):
            raise Unsupported("pair-gather pattern: the indices are not 1-D integer tensors")
    if nodes[i_ref["node"]]["shape"] != nodes[j_ref["node"]]["shape"]:
        raise Unsupported("pair-gather pattern: index vectors of different lengths")
    a_ref, b_ref = prod["args"][0], prod["args"][1]
    for ref in (a_ref, b_ref):
        if len(nodes[ref["node"]].get("shape", [])) != len(prod["shape"]):
            raise Unsupported("pair-gather pattern: matmul operands of broadcast ranks")
    return {**_common(parts, tunables, "Pairwise dot products of a matmul at index pairs"),
            "a_expr": _view_expr(traced, a_ref), "b_expr": _view_expr(traced, b_ref),
            "i_expr": _expr(traced, i_ref), "j_expr": _expr(traced, j_ref), "batched": batched,
            "out_dtype": out.get("dtype", "float32")}


def _strip(traced: dict[str, Any], ref: Any, ops: set[str]) -> tuple[Any, list[dict[str, Any]]]:
    """Follow nodes whose target is in ops back to their input; returns (input, nodes passed)."""
    nodes, passed = _nodes(traced), []
    while isinstance(ref, dict) and "node" in ref and nodes[ref["node"]].get("target") in ops:
        passed.append(nodes[ref["node"]])
        ref = nodes[ref["node"]]["args"][0]
    return ref, passed


def _swaps(passed: list[dict[str, Any]]) -> int:
    """How many 2-D transposes a chain of contiguous/t/transpose(0, 1) nodes applies (else raise)."""
    n = 0
    for node in passed:
        if node["target"] == "contiguous":
            continue
        dims = [d % 2 for d in node["args"][1:] if isinstance(d, int)]
        if node["target"] == "t" or (node["target"] == "transpose" and sorted(dims) == [0, 1]):
            n += 1
        else:
            raise Unsupported(f"searchsorted pattern: {node['target']} other than a 2-D transpose")
    return n


def build_searchsorted_rows(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    ss = _only(traced, "searchsorted")
    result, passed = _strip(traced, traced["output"], {"contiguous", "t", "transpose"})
    if not (isinstance(result, dict) and result.get("node") == ss["name"]):
        raise Unsupported("searchsorted pattern: the output is not searchsorted(...) (transposed or not)")
    args, kwargs = ss["args"], ss["kwargs"]
    if kwargs.get("sorter") is not None or len(args) > 2:
        raise Unsupported("searchsorted with a sorter or positional flags")
    right = bool(kwargs.get("right", False)) or kwargs.get("side") == "right"
    nodes = _nodes(traced)
    seq_ref = args[0]
    q_ref, q_passed = _strip(traced, args[1], {"contiguous", "t", "transpose"})
    seq_shape = nodes[seq_ref["node"]].get("shape", []) if isinstance(seq_ref, dict) and "node" in seq_ref else []
    q_shape = nodes[q_ref["node"]].get("shape", []) if isinstance(q_ref, dict) and "node" in q_ref else []
    out_t, q_t = _swaps(passed) % 2, _swaps(q_passed) % 2
    shared = len(seq_shape) == 1
    if not shared and not (len(seq_shape) == 2 and len(q_shape) == 2):
        raise Unsupported(f"searchsorted of a {len(seq_shape)}-d sequence with {len(q_shape)}-d values "
                          "(1-d shared or 2-d per-row sequences are implemented)")
    if shared and (q_t or out_t):
        raise Unsupported("searchsorted pattern: transposes around a shared 1-d sequence")
    out = _output(traced)
    q_expr = _expr(traced, q_ref) + (".t()" if q_t else "")
    return {**_common(parts, tunables, "Searchsorted per row (border bucketization)"),
            "seq_expr": _expr(traced, seq_ref), "q_expr": q_expr, "right": str(right), "shared_seq": shared,
            "out_view": ".t()" if out_t else "",
            # the final output has the queries' layout, transposed back if the result is
            "out_shape_expr": "(q.shape[1], q.shape[0])" if out_t else "q.shape",
            "out_dtype": out.get("dtype", "int64")}


def build_embedding_bag(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    """table[idx] / F.embedding(idx, table), then sum or mean over idx's last axis (the bag)."""
    out = _output(traced)
    if out["target"] not in ("sum", "mean"):
        raise Unsupported("embedding-bag pattern: the output is not a sum/mean")
    gathered, _ = _strip(traced, out["args"][0], _CASTS)
    nodes = _nodes(traced)
    gnode = nodes.get(gathered["node"]) if isinstance(gathered, dict) and "node" in gathered else None
    if gnode is None:
        raise Unsupported("embedding-bag pattern: the pooled tensor is not a gather")
    if gnode["target"] == "getitem":
        table_ref, idx_ref = gnode["args"]
    elif gnode["target"] == "embedding" and len(gnode["args"]) == 2:
        # max_norm renormalises table rows (in place); padding_idx, norm_type, scale_grad_by_freq
        # and sparse only matter with max_norm or for gradients, not for the forward values.
        if gnode["kwargs"].get("max_norm") is not None:
            raise Unsupported("embedding with max_norm")
        idx_ref, table_ref = gnode["args"]
    else:
        raise Unsupported("embedding-bag pattern: the pooled tensor is not table[indices]")
    idx = nodes.get(idx_ref["node"]) if isinstance(idx_ref, dict) and "node" in idx_ref else None
    table = nodes.get(table_ref["node"]) if isinstance(table_ref, dict) and "node" in table_ref else None
    if (idx is None or table is None or not str(idx.get("dtype", "")).startswith("int")
            or len(table.get("shape", [])) != 2 or len(idx.get("shape", [])) < 1):
        raise Unsupported("embedding-bag pattern: not a 2-d table indexed by an integer tensor")
    dim = out["kwargs"].get("dim", out["args"][1] if len(out["args"]) > 1 else None)
    dim = dim[0] if isinstance(dim, list) and len(dim) == 1 else dim
    bag_axis = len(idx["shape"]) - 1
    keepdim = out["kwargs"].get("keepdim", out["args"][2] if len(out["args"]) > 2 else False)
    if not isinstance(dim, int) or dim % (bag_axis + 2) != bag_axis or keepdim or out["kwargs"].get("dtype"):
        raise Unsupported("embedding-bag pattern: the reduction is not over the bag axis (keepdim=False)")
    return {**_common(parts, tunables, f"Embedding bag ({out['target']} pooling)"),
            "table_expr": _expr(traced, table_ref), "idx_expr": _expr(traced, idx_ref),
            "mean": out["target"] == "mean", "out_dtype": out.get("dtype", "float32")}


def build_truncate(traced: dict[str, Any], parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    return build_jagged_truncate(traced, parts, tunables, _common)


REC_BUILDERS = {"jagged_truncate": build_truncate, "embedding_bag": build_embedding_bag, "searchsorted_rows": build_searchsorted_rows, "gemm_pair_gather": build_pair_gather, "mapid": build_mapid, "bucketize": build_bucketize, "jagged_sum": build_jagged_sum}
