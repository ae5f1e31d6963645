"""Pieces of the spec's source that every candidate reuses verbatim (read by ast, not run).

ModelNew copies Model's `__init__` unchanged: the same signature, and parameters created
with the same names, shapes and order under the same seed, so the harness can load
Model's state_dict into ModelNew (or rely on identical initialisation).
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from services.generator.offline.ops import Unsupported


@dataclass
class SpecParts:
    imports: str          # the spec's top-level imports and the module constants its __init__ reads
    init_source: str      # `def __init__...` indented for a class body
    forward_params: str   # forward's parameter list without self, e.g. "x: torch.Tensor, y"
    forward_names: list[str]


def _needed(node: ast.Import | ast.ImportFrom, used: set[str]) -> bool:
    """Whether the candidate keeps a spec import: torch itself, or a name its copied __init__
    and constants read. The spec's forward is not copied, so what only it used (``F``, say,
    which the evaluator refuses in a candidate) is left out."""
    bound = {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None for a in node.names):
        return True
    if isinstance(node, ast.Import) and any(a.name == "torch.nn" and a.asname == "nn" for a in node.names):
        return True
    return bool(bound & used)


def spec_parts(source: str) -> SpecParts:
    tree = ast.parse(source)
    # One statement may import several modules (``import torch, torch.nn.functional as F``):
    # each is kept or left out on its own.
    import_nodes: list[ast.Import | ast.ImportFrom] = []
    for n in tree.body:
        if isinstance(n, ast.Import):
            import_nodes.extend(ast.Import(names=[alias]) for alias in n.names)
        elif isinstance(n, ast.ImportFrom):
            import_nodes.append(n)
    imports = [ast.unparse(n) for n in import_nodes]
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        raise Unsupported("spec defines no class Model")
    init = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        raise Unsupported("Model defines no forward()")
    constants: list[str] = []
    if init is None:
        init_text = "def __init__(self) -> None:\n    super().__init__()\n"
    else:
        constants = _module_constants(tree, init)
        # super(Model, self) would name a class the candidate does not define.
        init = _SuperFix().visit(init)
        init_text = ast.unparse(init) + "\n"
    args = forward.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        raise Unsupported("Model.forward with *args/**kwargs/keyword-only parameters")
    params = args.posonlyargs + args.args
    names = [a.arg for a in params][1:]
    forward_params = ast.unparse(ast.arguments(posonlyargs=[], args=params[1:], vararg=None, kwonlyargs=[],
                                               kw_defaults=[], kwarg=None, defaults=args.defaults))
    used = {n.id for n in ast.walk(ast.parse(init_text + "\n".join(constants))) if isinstance(n, ast.Name)}
    imports = [line for node, line in zip(import_nodes, imports, strict=True) if _needed(node, used)]
    return SpecParts(imports="\n".join(imports + constants), init_source=textwrap.indent(init_text, "    "),
                     forward_params=forward_params, forward_names=names)


def _module_constants(tree: ast.Module, init: ast.FunctionDef) -> list[str]:
    """Top-level `NAME = ...` assignments that __init__ reads (e.g. DTYPE = torch.float16), with
    the ones they read in turn, in source order: the copied __init__ needs them to run."""
    assigns = {n.targets[0].id: n for n in tree.body
               if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
    wanted: set[str] = set()
    stack = [x.id for x in ast.walk(init) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)]
    while stack:
        name = stack.pop()
        if name in assigns and name not in wanted:
            wanted.add(name)
            stack.extend(x.id for x in ast.walk(assigns[name].value) if isinstance(x, ast.Name))
    return [ast.unparse(n) for n in tree.body if isinstance(n, ast.Assign) and n in
            [assigns[w] for w in wanted]]


class _SuperFix(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and node.args:
            node.args = []
        return node
