"""Child-process entry that traces a spec's Model and writes its graph as JSON.

Spec code is user code, so the offline backend never runs it in its own process: it runs
`python -m services.generator.tracer request.json` inside the sandbox (``kevolve.exec.sandbox``)
with the request `{"source": ..., "sizes": {...}}` in its scratch directory, and reads
`result.json` back: a :class:`TraceResult` (the common child-status envelope) whose ``traced``
is what :func:`trace` returns:

    {"ok": true, "inputs": [...], "nodes": [...], "modules": {...}, "params": {...},
     "attrs": {...}, "output": ...}          or     {"ok": false, "error": "..."}

Nodes come from torch.fx.symbolic_trace with shapes/dtypes filled in by ShapeProp on the
spec's own get_inputs() at the given (small, cpu) sizes.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from pydantic import Field

from kevolve.exec.childstatus import ChildFailure, ChildStatus

RESULT_FILE = "result.json"


class TraceResult(ChildStatus):
    """What the tracer child writes: ``ok`` with the traced graph, or ``fail`` saying why."""

    traced: dict[str, Any] = Field(default_factory=dict)


class _Untraceable(Exception):
    """fx could not trace forward (as opposed to the spec failing to run)."""


def _encode(value: Any) -> Any:
    import torch
    import torch.fx as fx

    if isinstance(value, fx.Node):
        return {"node": value.name}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): _encode(v) for k, v in value.items()}}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (bool, int, float, str)) or value is None:
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return {"float": repr(value)}
        return value
    if isinstance(value, slice):
        return {"slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.Tensor):
        return {"tensor_const": list(value.shape)}
    return {"unknown": type(value).__name__}


def _target_name(node: Any) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    return getattr(target, "__name__", str(target))


def _meta(node: Any) -> dict[str, Any]:
    meta = node.meta.get("tensor_meta")
    if meta is None:
        return {}
    if not hasattr(meta, "shape") and isinstance(meta, (list, tuple)):  # a node producing several tensors (e.g. max with dim)
        return {"multi": [{"shape": list(m.shape), "dtype": str(m.dtype).removeprefix("torch.")}
                          for m in meta if hasattr(m, "shape")]}
    return {"shape": list(meta.shape), "dtype": str(meta.dtype).removeprefix("torch.")}


# Factories whose size/limit arguments may be traced values (torch.zeros(n, d) with n from
# lengths.numel()): fx only intercepts calls that receive a Proxy through __torch_function__,
# which these size-taking factories never see, so they fail inside torch. While tracing they
# are swapped for wrappers that record a call_function node of the real factory instead.
_FACTORIES = ("zeros", "ones", "empty", "full", "arange")


def _has_proxy(value: Any) -> bool:
    from torch import fx

    if isinstance(value, fx.Proxy):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_proxy(v) for v in value)
    if isinstance(value, dict):
        return any(_has_proxy(v) for v in value.values())
    return False


def _first_proxy(value: Any) -> Any:
    from torch import fx

    if isinstance(value, fx.Proxy):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else []
    for v in items:
        found = _first_proxy(v)
        if found is not None:
            return found
    return None


class _TracedFactories:
    """Context manager: torch.<factory> records an fx node when given traced sizes."""

    def __enter__(self) -> None:
        import torch

        self.saved = {name: getattr(torch, name) for name in _FACTORIES}

        def wrap(real: Any) -> Any:
            def factory(*args: Any, **kwargs: Any) -> Any:
                if _has_proxy(args) or _has_proxy(kwargs):
                    proxy = _first_proxy((args, kwargs))
                    return proxy.tracer.create_proxy("call_function", real, args, kwargs)
                return real(*args, **kwargs)
            factory.__name__ = real.__name__
            return factory

        for name, real in self.saved.items():
            setattr(torch, name, wrap(real))

    def __exit__(self, *exc: object) -> None:
        import torch

        for name, real in self.saved.items():
            setattr(torch, name, real)


def trace(source: str, sizes: dict[str, int], meta_only: bool = False) -> dict[str, Any]:
    """The graph at ``sizes`` (the spec's own where empty: on meta tensors, falling back to
    real CPU tensors where an op has no meta kernel, unless ``meta_only``: then that fails)."""
    import torch
    import torch.fx as fx
    from torch.fx.passes.shape_prop import ShapeProp

    from kevolve.specfile import load_module

    torch.manual_seed(0)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
        path = fh.name
    try:
        module = load_module(source, "kevolve_traced_spec", sizes=sizes or None, filename=path)

        def build() -> tuple[Any, list[Any], Any]:
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
            # forward may assign its module's attributes (``self.h0 = self.h0.to(x.device)``):
            # tracing leaves a Proxy there, which the graph module would copy and shape
            # propagation then read. Each such attribute gets its value back before the graph
            # module is built.
            held = [(sub, dict(vars(sub))) for sub in model.modules()]
            try:
                with _TracedFactories():
                    tracer = fx.Tracer()
                    graph = tracer.trace(model)
                for sub, attrs in held:
                    for name, value in attrs.items():
                        if isinstance(vars(sub).get(name), fx.Proxy):
                            vars(sub)[name] = value
                graph_module = fx.GraphModule(tracer.root, graph, type(model).__name__)
            except Exception as exc:  # data-dependent control flow and the like
                raise _Untraceable(f"torch.fx cannot trace Model.forward: {type(exc).__name__}: {exc}") from exc
            # fx names a placeholder in its own style (``A`` becomes ``a``); the candidate's
            # forward takes the spec's parameter names, so the graph must use them too.
            for node in graph_module.graph.nodes:
                if node.op == "placeholder" and node.name != node.target and str(node.target).isidentifier():
                    node._rename(str(node.target))
            ShapeProp(graph_module).propagate(*inputs)
            return model, inputs, graph_module

        try:
            if sizes:
                model, inputs, graph_module = build()
            else:
                # No cpu_shapes: the default sizes may be GPU-sized, so propagate shapes on meta
                # tensors (no compute, no memory); ops without meta kernels fall back to the CPU.
                try:
                    with torch.device("meta"):
                        model, inputs, graph_module = build()
                except _Untraceable:
                    raise
                except Exception:
                    if meta_only:
                        raise
                    torch.manual_seed(0)
                    model, inputs, graph_module = build()
        except _Untraceable as exc:
            return {"ok": False, "error": str(exc)}
    finally:
        os.unlink(path)

    nodes: list[dict[str, Any]] = []
    placeholders: list[dict[str, Any]] = []
    output: Any = None
    it = iter(inputs)
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            value = next(it, None)
            entry: dict[str, Any] = {"name": node.name}
            if isinstance(value, torch.Tensor):
                entry.update(kind="tensor", shape=list(value.shape), dtype=str(value.dtype).removeprefix("torch."),
                             requires_grad=bool(value.requires_grad))
            else:
                entry.update(kind="value", value=_encode(value))
            placeholders.append(entry)
        elif node.op == "output":
            output = _encode(node.args[0])
        else:
            nodes.append({"name": node.name, "op": node.op, "target": _target_name(node),
                          "args": _encode(node.args), "kwargs": {k: _encode(v) for k, v in node.kwargs.items()}, **_meta(node)})

    modules: dict[str, Any] = {}
    for name, sub in model.named_modules():
        if not name:
            continue
        attrs = {k: _encode(v) for k, v in vars(sub).items()
                 if not k.startswith("_") and isinstance(v, (int, float, bool, str, tuple, list)) or k == "padding_mode"}
        attrs["has_bias"] = getattr(sub, "bias", None) is not None
        modules[name] = {"type": type(sub).__name__, "attrs": attrs}
    params = {name: {"shape": list(p.shape), "dtype": str(p.dtype).removeprefix("torch.")}
              for name, p in list(model.named_parameters()) + list(model.named_buffers())}
    scalars = {k: v for k, v in vars(model).items()
               if not k.startswith("_") and isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {"ok": True, "inputs": placeholders, "nodes": nodes, "output": output, "modules": modules,
            "params": params, "attrs": scalars}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    # Spec code may print; keep stdout for our JSON only.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        return trace(request["source"], {k: int(v) for k, v in (request.get("sizes") or {}).items()},
                     meta_only=bool(request.get("meta_only")))
    except Exception as exc:
        tb = traceback.format_exc(limit=6)
        return {"ok": False, "error": f"running the spec failed: {type(exc).__name__}: {exc}", "traceback": tb}
    finally:
        sys.stdout = real_stdout


def main() -> None:
    """``python -m services.generator.tracer REQUEST`` (run by the generator inside the sandbox):
    reads the request JSON file and writes ``result.json`` beside it."""
    path = Path(sys.argv[1])
    traced = handle(json.loads(path.read_text()))
    if traced.get("ok"):
        result = TraceResult(traced=traced)
    else:
        result = TraceResult(status="fail", failure=ChildFailure(reason=str(traced.get("error") or ""),
                                                                traceback=str(traced.get("traceback") or "")))
    result.write(path.parent / RESULT_FILE)


if __name__ == "__main__":
    main()
