"""Capture a spec's computation with PyTorch's own machinery (runs inside the sandbox).

For each shape the candidate will meet, the spec is loaded at those sizes, ``Model`` is built
and ``get_inputs()`` called under a fake-tensor mode (shapes without memory: production sizes
cost nothing), and ``torch.export`` captures ``forward``. The graph is then decomposed with
PyTorch's decomposition tables down to its primitive operators, except the operators the
lowering generates whole (``KEEP``). Every value's shape and dtype comes from the graph's own
metadata.

Float attributes of the module (``self.scale``, a norm's ``eps``) are found in the graph by
exporting once more with each attribute nudged to a value of its own: a constant that moves
with an attribute is that attribute, which the candidate then reads at run time. Attributes
the graph depends on in any other way are recorded in the case's signature.
"""

from __future__ import annotations

import math
import operator
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from kevolve.specfile import load_module
from services.generator.lowering.schema import (AttrUse, Capture, CapturedCase, Node, Placeholder,
                                                TensorMeta)

aten = torch.ops.aten

# Operators the lowering generates as whole kernels: decomposing them would lose the
# structure a good kernel needs (a matrix product's tiles, a convolution's implicit GEMM).
KEEP_NAMES = (
    "mm.default", "bmm.default", "addmm.default", "convolution.default",
    "max_pool2d_with_indices.default", "max_pool3d_with_indices.default",
    "avg_pool2d.default", "avg_pool3d.default", "adaptive_max_pool2d.default", "adaptive_max_pool3d.default",
    "cumsum.default", "cumprod.default", "sort.default", "sort.stable", "topk.default",
    "argmax.default", "argmin.default", "embedding.default", "_embedding_bag.default",
    "gather.default", "scatter.src", "scatter.value", "scatter_add.default", "scatter_reduce.two",
    "index_select.default", "index.Tensor", "index_put.default", "index_add.default",
    "constant_pad_nd.default", "_cdist_forward.default", "upsample_nearest2d.vec", "upsample_nearest2d.default",
    # Scans, selections, searches and scatters lowered whole (ops_scan, ops_sort, ops_index,
    # ops_scatter): a binary search decomposed is a chain of gathers, a scan unrolled.
    "logcumsumexp.default", "cummax.default", "cummin.default", "kthvalue.default", "median.default",
    "median.dim", "nanmedian.default", "nanmedian.dim", "searchsorted.Tensor", "searchsorted.Scalar",
    "_embedding_bag_forward_only.default", "bucketize.Tensor", "bucketize.Scalar", "masked_scatter.default",
    "index_reduce.default",
    # Diagonal matrices (ops_diag): a product with one is a scaling of the other operand.
    "diag.default", "diag_embed.default",
    # Recurrent layers: the time loop runs on the host over two kernels (ops_rnn), where a
    # decomposition would unroll every step into kernels of their own.
    "lstm.input", "gru.input", "rnn_tanh.input", "rnn_relu.input",
    # Adaptive average pools and resampling: their decompositions gather with index tensors,
    # where a kernel computes each window or source position from the output index.
    "_adaptive_avg_pool2d.default", "_adaptive_avg_pool3d.default",
    *[f"{op}.{overload}" for op in ("upsample_nearest1d", "upsample_nearest3d", "_upsample_nearest_exact1d",
                                    "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "upsample_linear1d",
                                    "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d")
      for overload in ("vec", "default")],
)


def decompositions() -> Any:
    """PyTorch's export decompositions (core ATen) plus every further decomposition it has
    (down to prims) and our own for operators it leaves whole (``decompositions.ours``),
    minus the operators in KEEP, which stay whole in the graph."""
    from torch._decomp import decomposition_table
    from torch.export import default_decompositions

    from services.generator.lowering.decompositions import ours

    table = default_decompositions()
    for op, fn in [*decomposition_table.items(), *ours().items()]:
        if op not in table:
            table[op] = fn
    for op in _keep_ops():
        if op in table:
            del table[op]
    return table


@lru_cache(maxsize=1)
def _keep_ops() -> tuple[Any, ...]:
    keep = []
    for name in KEEP_NAMES:
        op_name, overload = name.split(".")
        packet = getattr(aten, op_name, None)
        if packet is not None and hasattr(packet, overload):
            keep.append(getattr(packet, overload))
    return tuple(keep)


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def tensor_meta(value: Any) -> TensorMeta | None:
    if isinstance(value, torch.Tensor):
        strided = value.layout == torch.strided
        return TensorMeta(shape=[int(s) for s in value.shape], dtype=_dtype(value.dtype),
                          stride=[int(s) for s in value.stride()] if strided else [],
                          offset=int(value.storage_offset()) if strided else 0)
    return None


def encode(value: Any) -> Any:
    """A node argument as JSON-able data (see schema.Node)."""
    if isinstance(value, torch.fx.Node):
        return {"ref": value.name}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, torch.dtype):
        return {"dtype": _dtype(value)}
    if isinstance(value, torch.device):
        return {"device": value.type}
    if isinstance(value, (torch.memory_format, torch.layout)):
        return {"enum": str(value)}
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise CaptureError(f"the graph has a data-dependent size or value ({value}), which needs a "
                           "static shape to lower")
    raise CaptureError(f"the graph has an argument of type {type(value).__name__}, which the lowering cannot encode")


class CaptureError(Exception):
    """What stopped the capture, in words for the user."""


def _float_attrs(model: torch.nn.Module) -> dict[str, float]:
    found: dict[str, float] = {}
    for prefix, module in model.named_modules():
        for key, value in vars(module).items():
            # Subclasses count (NumPy's float64 from ``1 / np.sqrt(d)``), as plain floats.
            if not key.startswith("_") and isinstance(value, float):
                found[f"{prefix}.{key}" if prefix else key] = float(value)
    return found


def _signature(model: torch.nn.Module) -> dict[str, Any]:
    """Non-float attributes a graph may be specialised on (ints, bools, strings, tuples)."""
    sig: dict[str, Any] = {}
    for prefix, module in model.named_modules():
        for key, value in vars(module).items():
            if key.startswith("_") or key == "training":
                continue
            if _plain(value) and not isinstance(value, float):
                sig[f"{prefix}.{key}" if prefix else key] = list(value) if isinstance(value, tuple) else value
        # Submodule slots too (filled or empty): a constructor argument may decide whether a layer
        # exists at all (a residual projection only where the widths differ).
        for key, sub in module._modules.items():
            sig[f"{prefix}.{key}" if prefix else key] = None if sub is None else "<module>"
    return sig


def _plain(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return True
    if isinstance(value, (tuple, list)) and len(value) <= 64:
        return all(isinstance(v, (bool, int, float, str)) or v is None for v in value)
    return False


def _set_attr(model: torch.nn.Module, path: str, value: Any) -> None:
    owner, _, name = path.rpartition(".")
    setattr(model.get_submodule(owner) if owner else model, name, value)


def _export(model: torch.nn.Module, inputs: tuple[Any, ...], source: str = "") -> torch.export.ExportedProgram:
    from torch.export import export

    try:
        program = export(model, inputs, strict=False)
    except Exception as exc:  # noqa: BLE001 - turned into the user's answer
        raise CaptureError(_export_failure(exc, source)) from exc
    try:
        return program.run_decompositions(decompositions())
    except Exception as exc:  # noqa: BLE001
        raise CaptureError(f"decomposing the exported graph failed: {_brief(exc)}") from exc


def _export_failure(exc: BaseException, source: str) -> str:
    """What stopped torch.export, in the user's terms, with their line when it is known."""
    import re

    text = str(exc)
    where = re.search(r'File "[^"]*", line (\d+), in (\w+)', text)
    line = ""
    if where and source:
        lines = source.splitlines()
        number = int(where.group(1))
        if 0 < number <= len(lines):
            line = f" (line {number}: `{lines[number - 1].strip()}`)"
    elif where:
        line = f" (line {where.group(1)}, in {where.group(2)})"
    name = type(exc).__name__
    if "DataDependent" in name or "data-dependent" in text:
        return (f"Model.forward's control flow depends on tensor values{line}, which a kernel program cannot "
                "follow; express the choice with torch.where (or torch.cond)")
    return f"torch.export cannot capture Model.forward{line}: {_brief(exc)}"


def missing_package(exc: ModuleNotFoundError) -> str:
    """A spec importing a package the environment lacks, said plainly."""
    name = (exc.name or str(exc)).split(".")[0]
    return (f"the spec imports {name!r}, which is not installed where specs run; "
            "specs may use torch and the Python standard library")


def _brief(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # torch.export's messages name the user's line ("File ..., line N in forward"): keep it.
    where = next((line.strip() for line in lines if "in forward" in line or ", line " in line), "")
    head = lines[0][:600] if lines else type(exc).__name__
    return head + (f" ({where[:300]})" if where and where not in head else "")


def _walk(value: Any, path: list[int | str]) -> Iterator[tuple[list[int | str], Any]]:
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _walk(v, [*path, i])
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, [*path, k])
    else:
        yield path, value


def _attr_uses(base: torch.export.ExportedProgram, nudged: torch.export.ExportedProgram,
               values: dict[float, str]) -> tuple[list[AttrUse], bool]:
    """Constants of ``base`` that ``nudged`` moved to a nudged attribute value; and whether any
    constant moved to a value that is no attribute's (the graph folded an attribute in)."""
    a = [n for n in base.graph.nodes if n.op == "call_function"]
    b = [n for n in nudged.graph.nodes if n.op == "call_function"]
    if len(a) != len(b) or any(x.target != y.target for x, y in zip(a, b, strict=True)):
        return [], True
    uses: list[AttrUse] = []
    folded = False
    for x, y in zip(a, b, strict=True):
        for path, value in _walk([list(y.args), dict(y.kwargs)], []):
            old = _lookup(x, path)
            if isinstance(value, float) and isinstance(old, float) and value != old:
                if value in values:
                    uses.append(AttrUse(node=x.name, path=path, attr=values[value]))
                else:
                    folded = True
    return uses, folded


def _lookup(node: torch.fx.Node, path: list[int | str]) -> Any:
    value: Any = [list(node.args), dict(node.kwargs)]
    for key in path:
        try:
            value = value[key]
        except (IndexError, KeyError, TypeError):
            return None
    return value


@contextmanager
def _nudged(model: torch.nn.Module, attrs: dict[str, float]) -> Iterator[dict[float, str]]:
    """Each float attribute set to a value of its own, restored afterwards."""
    values: dict[float, str] = {}
    for i, (path, value) in enumerate(sorted(attrs.items())):
        moved = value * (1.0 + (i + 1) * 2.0**-11) + (i + 1) * 2.0**-19
        values[moved] = path
        _set_attr(model, path, moved)
    try:
        yield values
    finally:
        for path, value in attrs.items():
            _set_attr(model, path, value)


def _build(module: Any, fake: bool) -> tuple[torch.nn.Module, tuple[Any, ...], list[Any]]:
    torch.manual_seed(0)
    init_args = list(module.get_init_inputs())
    model = module.Model(*init_args).eval()
    inputs = tuple(module.get_inputs())
    return model, inputs, init_args


def capture_case(source: str, name: str, sizes: dict[str, int], index: int, filename: str) -> CapturedCase:
    module = load_module(source, f"kv_capture_{index}", sizes or None, filename)
    errors: list[str] = []
    for fake in (True, False):
        try:
            if fake:
                with FakeTensorMode(allow_non_fake_inputs=True):
                    model, inputs, init_args = _build(module, fake)
                    return _case(model, inputs, init_args, name, sizes, fake, source)
            model, inputs, init_args = _build(module, fake)
            return _case(model, inputs, init_args, name, sizes, fake, source)
        except CaptureError:
            raise
        except Exception as exc:  # noqa: BLE001 - fake tensors cannot serve every spec: retry real
            errors.append(_brief(exc))
    raise CaptureError(f"building Model or its inputs failed: {errors[-1]}")


def _attributes_as_buffers(model: torch.nn.Module) -> set[str]:
    """Register every tensor a (sub)module holds as a plain attribute (``self.h0 =
    torch.randn(...)`` in ``__init__``, moved with ``self.h0 = self.h0.to(x.device)`` in
    forward) as a non-persistent buffer, and return their paths. torch.export takes such a
    tensor for a constant of the graph, which cannot carry a fake tensor (capture's models
    are built on fake tensors) nor a large one; as a buffer it is a graph input the candidate
    reads from its own module (whose ``__init__`` makes the same tensor)."""
    paths = set()
    for prefix, module in model.named_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter) \
                    and not name.startswith("_"):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)
                paths.add(f"{prefix}.{name}" if prefix else name)
    return paths


def _case(model: torch.nn.Module, inputs: tuple[Any, ...], init_args: list[Any], name: str,
          sizes: dict[str, int], fake: bool, source: str = "") -> CapturedCase:
    attributes = _attributes_as_buffers(model)
    program = _export(model, inputs, source)
    attrs = _float_attrs(model)
    uses: list[AttrUse] = []
    signature = _signature(model)
    if attrs:
        with _nudged(model, attrs) as values:
            nudged = _export(model, inputs)
        uses, folded = _attr_uses(program, nudged, values)
        used = {u.attr for u in uses}
        moved = _moved_attrs(program, nudged)
        for path, value in attrs.items():
            # A float the graph folded into other constants is a specialisation; one it never
            # reads (a dropout's p in eval mode) is not.
            if path not in used and (folded or moved):
                signature[path] = value
    return _serialize(program, name, sizes, uses, signature, init_args, fake, attributes)


def _moved_attrs(base: torch.export.ExportedProgram, nudged: torch.export.ExportedProgram) -> bool:
    return str(base.graph) != str(nudged.graph)


def _serialize(program: torch.export.ExportedProgram, name: str, sizes: dict[str, int], uses: list[AttrUse],
               signature: dict[str, Any], init_args: list[Any], fake: bool,
               attributes: set[str] | None = None) -> CapturedCase:
    from torch.export.graph_signature import InputKind, OutputKind

    sig = program.graph_signature
    kinds = {InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer",
             InputKind.CONSTANT_TENSOR: "constant", InputKind.USER_INPUT: "input"}
    specs = {spec.arg.name: spec for spec in sig.input_specs}
    placeholders: list[Placeholder] = []
    constants: dict[str, list[Any]] = {}
    position = 0
    graph_inputs = [n for n in program.graph.nodes if n.op == "placeholder"]
    for node in graph_inputs:
        spec = specs.get(node.name)
        if spec is not None and spec.kind == torch.export.graph_signature.InputKind.TOKEN:
            # torch.export threads a token through operators with side effects: the runtime
            # checks of torch.linalg's solvers (a singular or non-positive-definite input
            # raises), prints and asserts on tensor values.
            named = sorted({str(n.args[1]) for n in program.graph.nodes  # with_effects(token, op, ...)
                            if n.op == "call_function" and "with_effects" in str(n.target) and len(n.args) > 1})
            raise CaptureError("Model.forward calls an operator with side effects"
                               + (f" ({', '.join(named[:3])})" if named else "")
                               + ", such as the input checks of torch.linalg's solvers; a kernel program "
                               "computes values only")
        if spec is None or spec.kind not in kinds:
            raise CaptureError(f"the exported graph has an input of kind {getattr(spec, 'kind', '?')}")
        kind = kinds[spec.kind]
        if kind == "buffer" and spec.target in (attributes or set()):
            kind = "attribute"
        entry = Placeholder(name=node.name, kind=kind, target=spec.target or "", meta=tensor_meta(node.meta.get("val")))
        if kind == "input":
            entry.position = position
            position += 1
            if entry.meta is None:
                entry.value = encode(getattr(spec.arg, "value", None))
        if kind == "constant":
            value = program.constants[spec.target]
            if isinstance(value, FakeTensor) or value.numel() > 65536:
                raise CaptureError(f"forward builds a tensor constant of {tuple(value.shape)} elements; "
                                   "only small constants can be carried into a kernel program")
            constants[node.name] = value.detach().reshape(-1).tolist()
        placeholders.append(entry)
    # Mutations of buffers or inputs come first among the graph's outputs; only what forward
    # returns is the candidate's to compute (the evaluator refuses candidates that mutate).
    user_outputs = [i for i, spec in enumerate(sig.output_specs) if spec.kind == OutputKind.USER_OUTPUT]
    nodes: list[Node] = []
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            nodes.append(Node(name=node.name, target="getitem", args=encode(list(node.args)),
                              outputs=[tensor_meta(node.meta.get("val"))]))
            continue
        val = node.meta.get("val")
        _require_static(node, val)
        outs = [tensor_meta(v) for v in val] if isinstance(val, (tuple, list)) else [tensor_meta(val)]
        nodes.append(Node(name=node.name, target=str(node.target), args=encode(list(node.args)),
                          kwargs={k: encode(v) for k, v in node.kwargs.items()}, outputs=outs))
    output = next(n for n in program.graph.nodes if n.op == "output")
    out_values = [list(output.args[0])[i] for i in user_outputs]
    if any(not isinstance(v, torch.fx.Node) for v in out_values):
        raise CaptureError("forward returns a value that is not a tensor (a number, None, or a constant)")
    spec_type = program.call_spec.out_spec.type if program.call_spec.out_spec is not None else None
    structure = "tuple" if spec_type is tuple else "list" if spec_type is list else "single"
    if structure == "single" and len(out_values) != 1:
        raise CaptureError("forward returns a nested structure; a kernel program returns a tensor or a flat tuple")
    return CapturedCase(name=name, sizes=sizes, placeholders=placeholders, nodes=nodes,
                        outputs=[encode(v) for v in out_values], out_structure=structure, constants=constants,
                        attr_uses=uses, signature=signature, init_args=[_init_value(v) for v in init_args])


def _require_static(node: torch.fx.Node, val: Any) -> None:
    """Refuse, naming the operator, an output whose size depends on the data (nonzero,
    masked_select, unique, boolean-mask indexing): kernels are written for fixed sizes."""
    for v in val if isinstance(val, (tuple, list)) else [val]:
        if isinstance(v, torch.Tensor) and not all(isinstance(s, int) for s in v.shape):
            what = str(node.target)
            masks = [a for a in (node.args[1] if len(node.args) > 1 and isinstance(node.args[1], (list, tuple))
                                 else []) if isinstance(a, torch.fx.Node)
                     and getattr(a.meta.get("val"), "dtype", None) in (torch.bool, torch.uint8)]
            if masks:
                what = f"indexing with a boolean mask (x[mask], {node.target})"
            raise CaptureError(f"{what} produces a tensor whose size depends on the input's values; "
                               "a kernel program needs every size before it runs")


def _init_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return {"tensor": tensor_meta(value).model_dump() if tensor_meta(value) else None}
    try:
        return encode(value)
    except CaptureError:
        return {"unknown": type(value).__name__}


def capture(source: str, cases: list[tuple[str, dict[str, int]]], filename: str) -> Capture:
    """Every case captured, or the first failure in words."""
    import ast

    result = Capture()
    try:
        tree = ast.parse(source)
        model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
        forward = next(n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
        result.forward_args = [a.arg for a in forward.args.posonlyargs + forward.args.args][1:]
    except (SyntaxError, StopIteration):
        pass
    for index, (name, sizes) in enumerate(cases):
        try:
            result.cases.append(capture_case(source, name, sizes, index, filename))
        except CaptureError as exc:
            return Capture(ok=False, error=str(exc), where=name, forward_args=result.forward_args)
        except ModuleNotFoundError as exc:
            return Capture(ok=False, error=missing_package(exc), where=name, forward_args=result.forward_args)
        except Exception as exc:  # noqa: BLE001 - the spec's own failure, reported as such
            tb = traceback.format_exc(limit=-4)
            return Capture(ok=False, error=f"running the spec failed: {_brief(exc)}\n{tb}", where=name,
                           forward_args=result.forward_args)
    return result


def main() -> None:
    """``python -m services.generator.lowering.capture request.json`` (run by the generator
    inside the sandbox): reads ``{"source", "cases": [[name, sizes], ...]}`` and writes the
    Capture as ``capture.json`` beside it."""
    import json
    import sys
    from pathlib import Path

    path = Path(sys.argv[1])
    request = json.loads(path.read_text())
    spec_file = path.parent / "spec.py"
    spec_file.write_text(request["source"])
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # whatever the spec prints stays out of the way
    try:
        result = capture(request["source"], [(str(n), dict(s)) for n, s in request["cases"]], str(spec_file))
    finally:
        sys.stdout = real_stdout
    (path.parent / "capture.json").write_text(result.model_dump_json())


if __name__ == "__main__":
    main()
