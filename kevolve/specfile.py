"""The kernel spec format (KernelBench's) and the candidate format, as code.

A spec is a Python file with ``class Model(nn.Module)``, ``get_inputs()``,
``get_init_inputs()`` and module-level size constants (``batch_size = 4096``). Optional:
``cpu_shapes = {"batch_size": 64}`` (screening sizes for the cpu pool), ``test_cases =
[{"name": "small", "sizes": {...}}, ...]`` (extra shapes scored per candidate),
``atol``/``rtol``. A candidate defines ``ModelNew`` with Model's signatures.

Size overrides rewrite the top-level integer assignments before the module runs, so
derived constants (``dim = 2 * hidden``) follow. Loading executes user code: callers do it
only inside a sandboxed child process (the evaluator, the profiler, the spec probe).
"""

from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass, field

REQUIRED = ("Model", "get_inputs", "get_init_inputs")


class SpecError(ValueError):
    """The spec source is unusable; the message names what is wrong."""


@dataclass
class SpecOutline:
    """What the source says without running it."""

    sizes: dict[str, int] = field(default_factory=dict)      # top-level int constants
    cpu_sizes: dict[str, int] = field(default_factory=dict)  # from cpu_shapes
    test_cases: list[dict[str, object]] = field(default_factory=list)
    atol: float | None = None
    rtol: float | None = None
    defines: set[str] = field(default_factory=set)


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
            ast.LShift: lambda a, b: a << b if 0 <= b <= 62 else None,
            ast.RShift: lambda a, b: a >> b if b >= 0 else None,
            ast.Pow: lambda a, b: a ** b if 0 <= b <= 62 else None}


def int_constant(node: ast.AST) -> int | None:
    """The integer an expression of integer literals computes (``64 * 1024 * 1024``,
    ``1 << 26``, ``2 ** 20``, ``(4096 + 8) // 2``), folded without running anything; None for
    anything else (names, calls, floats, results beyond 64 bits)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = int_constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        left, right = int_constant(node.left), int_constant(node.right)
        if left is None or right is None or (right == 0 and isinstance(node.op, (ast.FloorDiv, ast.Mod))):
            return None
        value = _INT_OPS[type(node.op)](left, right)
        return value if value is not None and abs(value) < 1 << 63 else None
    return None


def tuple_ints(node: ast.AST) -> dict[int, int] | None:
    """``{position: integer}`` of a tuple or list of constants (``(3, 224, 224)``, a layer list
    ``[64, 64, "M", 128]``: its integers only); None for anything else."""
    if not isinstance(node, (ast.Tuple, ast.List)) or not node.elts or len(node.elts) > 32:
        return None
    if not all(isinstance(e, ast.Constant) or int_constant(e) is not None for e in node.elts):
        return None
    found = {i: int_constant(e) for i, e in enumerate(node.elts)}
    ints = {i: v for i, v in found.items() if v is not None}
    return ints or None


def parse(source: str, filename: str = "<spec>") -> ast.Module:
    """The spec's syntax tree; SpecError naming the line of a syntax error."""
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SpecError(f"spec does not parse: {exc.msg} (line {exc.lineno})") from exc


def int_names(node: ast.stmt) -> dict[str, int] | None:
    """The integer constants a chained or unpacking assignment sets (``height = width = 224``,
    ``h, w = 224, 160``); None for any other statement."""
    if not isinstance(node, ast.Assign):
        return None
    if all(isinstance(t, ast.Name) for t in node.targets) and len(node.targets) > 1:
        value = int_constant(node.value)
        if value is not None:
            return {t.id: value for t in node.targets if isinstance(t, ast.Name)}
        return None
    target = node.targets[0] if len(node.targets) == 1 else None
    if (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)
            and isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(target.elts)):
        values = [int_constant(v) for v in node.value.elts]
        if all(v is not None for v in values):
            return {e.id: int(v) for e, v in zip(target.elts, values, strict=True)  # type: ignore[arg-type]
                    if isinstance(e, ast.Name)}
    return None


def outline(source: str | ast.Module, filename: str = "<spec>") -> SpecOutline:
    """What a spec (its source, or its tree from :func:`parse`) says without executing it."""
    tree = source if isinstance(source, ast.Module) else parse(source, filename)
    out = SpecOutline()
    for node in tree.body:
        several = int_names(node)
        if several is not None:
            out.defines.update(several)
            out.sizes.update(several)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.defines.add(node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            out.defines.add(name)
            value = _literal(node.value)
            folded = int_constant(node.value)
            if isinstance(value, bool):
                continue
            if folded is not None:
                out.sizes[name] = folded
            elif tuple_ints(node.value) is not None:
                # input_shape = (3, 224, 224): each integer is a size of its own, "input_shape[1]".
                out.sizes.update({f"{name}[{i}]": v for i, v in (tuple_ints(node.value) or {}).items()})
            elif name in ("atol", "rtol") and isinstance(value, float):
                setattr(out, name, value)
            elif name == "cpu_shapes" and isinstance(value, dict):
                out.cpu_sizes = {str(k): int(v) for k, v in value.items() if isinstance(v, int)}
            elif name == "test_cases" and isinstance(value, list):
                out.test_cases = [c for c in value if isinstance(c, dict)]
    return out


def check_outline(source: str | ast.Module) -> SpecOutline:
    """Static part of spec validation: parses, and defines Model/get_inputs/get_init_inputs."""
    out = outline(source)
    missing = [name for name in REQUIRED if name not in out.defines]
    if missing:
        raise SpecError(f"spec lacks {', '.join(missing)} (a spec defines class Model, get_inputs() and get_init_inputs())")
    return out


class _SizeRewriter(ast.NodeTransformer):
    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes
        self.applied: set[str] = set()

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body: list[ast.stmt] = []
        for stmt in node.body:
            several = int_names(stmt)
            if several is not None and set(several) & set(self.sizes):
                # One assignment per name, so each takes its own size.
                for name, value in several.items():
                    body.append(ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())],
                                                             value=ast.Constant(self.sizes.get(name, value))), stmt))
                    self.applied.update(set(several) & set(self.sizes))
                continue
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id in self.sizes):
                stmt.value = ast.copy_location(ast.Constant(self.sizes[stmt.targets[0].id]), stmt.value)
                self.applied.add(stmt.targets[0].id)
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, (ast.Tuple, ast.List)) and tuple_ints(stmt.value) is not None):
                name = stmt.targets[0].id
                for i, element in enumerate(stmt.value.elts):
                    if f"{name}[{i}]" in self.sizes:
                        stmt.value.elts[i] = ast.copy_location(ast.Constant(self.sizes[f"{name}[{i}]"]), element)
                        self.applied.add(f"{name}[{i}]")
            body.append(stmt)
        node.body = body
        return node


def load_module(source: str, module_name: str, sizes: dict[str, int] | None = None,
                filename: str | None = None) -> types.ModuleType:
    """Execute ``source`` as a fresh module named ``module_name``, with size constants overridden.

    The module is registered in sys.modules (Triton's JIT and inspect need a real module);
    ``filename`` should be a real file holding the source so tracebacks and Triton can read it.
    """
    tree = ast.parse(source, filename=filename or module_name)
    if sizes:
        rewriter = _SizeRewriter(sizes)
        tree = rewriter.visit(tree)
        unknown = set(sizes) - rewriter.applied
        if unknown:
            raise SpecError(f"size override names no module-level constant: {', '.join(sorted(unknown))}")
        ast.fix_missing_locations(tree)
    module = types.ModuleType(module_name)
    module.__file__ = filename or f"<{module_name}>"
    sys.modules[module_name] = module
    code = compile(tree, module.__file__, "exec")
    exec(code, module.__dict__)  # noqa: S102 - the caller runs this inside the sandboxed child
    return module
