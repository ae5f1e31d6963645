"""The parts of a spec a candidate carries over verbatim (read with ``ast``, never run here).

``ModelNew`` must build the same parameters and buffers under the same names as ``Model``
(the evaluator loads the reference's weights into it), and the same attributes (the kernels
read floats such as ``self.scale`` from it, and refuse attributes they were not built for).
So the candidate keeps ``Model.__init__`` and the ``__init__`` of every module class the spec
defines, with everything else (``forward`` and other methods) removed, under names of its
own. Imports a candidate may not make (``torch.nn.functional``, third-party packages) are
left out: an ``__init__`` that needs one cannot be carried.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from services.generator.lowering.ir import Unsupported

# What a candidate may import (the evaluator's static check allows these and no others).
CANDIDATE_IMPORTS = {"torch", "torch.nn", "math", "typing", "functools", "dataclasses", "__future__",
                     "collections.abc", "typing_extensions"}
PREFIX = "_KvSpec"


@dataclass
class SpecInit:
    imports: list[str]       # import statements to keep
    definitions: str         # module constants, classes (renamed, __init__ only) the inits need
    base: str                # the class ModelNew derives from
    forward_params: list[str]
    forward_signature: str   # forward's parameter list without self, as written in the spec
    forward_vararg: str = ""  # the name of forward's *args, if it has one

    def input_code(self, position: int) -> str:
        """How forward's body names its ``position``-th positional argument."""
        if position < len(self.forward_params):
            return self.forward_params[position]
        if self.forward_vararg:
            return f"{self.forward_vararg}[{position - len(self.forward_params)}]"
        return f"arg{position}"


def _module_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [node.module or ""]


def _bound_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    return [(a.asname or a.name).split(".")[0] for a in node.names]


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        # super(Model, self) names a class the candidate does not define.
        if isinstance(node.func, ast.Name) and node.func.id == "super" and node.args:
            node.args = []
        return node


# NumPy's scalar functions and constants a constructor may use on Python numbers
# (``np.log2(8)``, ``np.sqrt(d)``) that math has under the same name: the candidate may not
# import NumPy, and on a number each gives the same float (NumPy's float64 is a Python float).
NUMPY_AS_MATH = frozenset({"pi", "e", "inf", "log", "log2", "log10", "exp", "sqrt", "floor", "ceil", "sin", "cos",
                           "tan", "tanh", "log1p", "expm1", "fabs"})


class _NumpyAsMath(ast.NodeTransformer):
    """``np.<f>`` -> ``math.<f>`` for NumPy's aliases ``names`` and the functions above; any
    other use of NumPy is left for the caller to refuse."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.used = False

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id in self.names and node.attr in NUMPY_AS_MATH:
            self.used = True
            return ast.copy_location(ast.Attribute(ast.Name("math", ast.Load()), node.attr, node.ctx), node)
        return self.generic_visit(node)


_MODULE_BASES = ("Module", "Sequential", "ModuleList", "ModuleDict")


def _module_classes(classes: list[ast.ClassDef]) -> list[ast.ClassDef]:
    """The spec's classes that are modules: deriving from torch's module classes, or from
    another of the spec's module classes (at any depth)."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name in names:
                continue
            bases = [ast.unparse(b) for b in cls.bases]
            if cls.name == "Model" or any(b.split(".")[-1] in _MODULE_BASES or b in names for b in bases):
                names.add(cls.name)
                changed = True
    return [c for c in classes if c.name in names]


def spec_init(source: str) -> SpecInit:
    tree = ast.parse(source)
    kept_imports: list[str] = []
    dropped: set[str] = set()
    numpy: set[str] = set()  # the names NumPy is imported under (``import numpy as np``)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # One statement may import several modules (``import torch, torch.nn as nn,
            # torch.nn.functional as F``): each is kept or dropped on its own.
            parts = [ast.Import(names=[alias]) for alias in node.names] if isinstance(node, ast.Import) else [node]
            for part in parts:
                if getattr(part, "level", 0) == 0 and all(m in CANDIDATE_IMPORTS for m in _module_names(part)):
                    kept_imports.append(ast.unparse(part))
                else:
                    dropped.update(_bound_names(part))
                    if isinstance(part, ast.Import) and part.names[0].name == "numpy":
                        numpy.add(part.names[0].asname or "numpy")
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    model = next((c for c in classes if c.name == "Model"), None)
    if model is None:
        raise Unsupported("the spec defines no class Model")
    module_classes = _module_classes(classes)
    renames = {c.name: f"{PREFIX}{c.name}" for c in module_classes}
    forward = next((f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    if forward is None:
        raise Unsupported("Model defines no forward()")
    fargs = forward.args
    if fargs.kwarg or fargs.kwonlyargs:
        raise Unsupported("Model.forward takes **kwargs or keyword-only parameters")
    params = fargs.posonlyargs + fargs.args
    signature = ast.unparse(ast.arguments(posonlyargs=[], args=params[1:], vararg=fargs.vararg, kwonlyargs=[],
                                          kw_defaults=[], kwarg=None, defaults=fargs.defaults))
    parts: list[ast.stmt] = []
    needed: set[str] = set()
    for cls in module_classes:
        # The constructor and the class-level constants it or users may read (``expansion = 4``);
        # forward and every other method stay behind.
        body: list[ast.stmt] = [stmt for stmt in cls.body
                                if (isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__")
                                or isinstance(stmt, (ast.Assign, ast.AnnAssign))]
        body = [_Rename(renames).visit(ast.fix_missing_locations(_copy(stmt))) for stmt in body]
        if numpy:
            as_math = _NumpyAsMath(numpy)
            body = [ast.fix_missing_locations(as_math.visit(stmt)) for stmt in body]
            if as_math.used and "import math" not in kept_imports:
                kept_imports.append("import math")
        new = ast.ClassDef(name=renames[cls.name], bases=[_Rename(renames).visit(_copy(b)) for b in cls.bases],
                           keywords=[], body=body or [ast.Pass()], decorator_list=[], type_params=[])
        parts.append(new)
        needed.update(n.id for n in ast.walk(new) if isinstance(n, ast.Name))
    used_dropped = sorted(needed & dropped)
    if used_dropped:
        raise Unsupported(f"the spec's module constructors use {', '.join(used_dropped)}, imported from a "
                          "module a kernel program may not import")
    definitions = _constants_and_helpers(tree, needed, set(renames)) + parts
    text = "\n\n".join(ast.unparse(ast.fix_missing_locations(p)) for p in definitions)
    return SpecInit(imports=kept_imports, definitions=text, base=renames["Model"],
                    forward_params=[a.arg for a in params[1:]], forward_signature=signature,
                    forward_vararg=fargs.vararg.arg if fargs.vararg else "")


def _copy(node: ast.AST) -> ast.AST:
    return ast.parse(ast.unparse(node)).body[0] if isinstance(node, ast.stmt) else ast.parse(
        ast.unparse(node), mode="eval").body


def _constants_and_helpers(tree: ast.Module, needed: set[str], classes: set[str]) -> list[ast.stmt]:
    """Module-level assignments and plain functions the copied code reads, with what they
    read in turn, in source order."""
    defs: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        defs[name.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defs[node.target.id] = node
        elif isinstance(node, ast.FunctionDef) and node.name not in ("get_inputs", "get_init_inputs"):
            defs[node.name] = node
    wanted: set[int] = set()
    stack = [n for n in needed if n in defs]
    while stack:
        name = stack.pop()
        stmt = defs[name]
        if id(stmt) in wanted:
            continue
        wanted.add(id(stmt))
        stack.extend(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in defs and n.id not in classes)
    return [node for node in tree.body if id(node) in wanted]
