"""Static anti-cheat checks on a candidate's AST (not regex: renames and aliases are resolved).

These only triage: the runtime checks in the sandboxed child and the comparison in the
trusted worker decide correctness. A violation names its rule (``static:<rule>``):

* ``banned_import``: any module outside a small allowlist (os, sys, ctypes, threading,
  subprocess, inspect, gc, importlib, socket, time, numpy, ... are all out).
* ``torch_compute``: a torch attribute path that computes (``torch.nn.functional``,
  ``torch.matmul``, ``torch.ops.aten``, ``torch.softmax``...) or a tensor compute method
  (``x.sum()``, ``x.softmax()``) / ``@`` outside ``@triton.jit`` functions. Allocation and
  view operations a Triton wrapper needs are allowed.
* ``reference_model``: any use of the reference ``Model`` (calling it, inheriting it).
* ``try_fallback``: an ``except`` that does something other than re-raise (a PyTorch
  fallback when the kernel fails).
* ``dynamic_code``: exec/eval/compile/__import__/getattr with a computed name/open/...
* ``introspection``: frames, globals, dunder attributes, gc or inspect.
* ``streams``: CUDA streams, events, graphs.
* ``monkeypatch``: assigning to attributes of torch, triton or any imported module.
* ``no_triton_kernel``: no ``@triton.jit`` function at all.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import types
from dataclasses import dataclass

ALLOWED_MODULES = {
    "torch",
    "torch.nn",
    "triton",
    "triton.language",
    # TensorDescriptor: a host-side record of a tensor's base, shape, strides and tile shape
    # for TMA loads; it computes nothing.
    "triton.tools.tensor_descriptor",
    "math",
    "typing",
    "functools",
    "dataclasses",
    "__future__",
    "collections.abc",
    "typing_extensions",
}
ALLOWED_PREFIXES = ("triton.language.",)  # triton.language.extra.libdevice and friends
# triton.<name> paths a candidate may use: the decorators, launch helpers and the language.
# Triton's runtime and compiler internals (a C compiler driver, a module loader) are out.
TRITON_ALLOWED = {
    "triton",
    "triton.jit",
    "triton.autotune",
    "triton.heuristics",
    "triton.Config",
    "triton.cdiv",
    "triton.next_power_of_2",
    "triton.language",
    "triton.tools",
    "triton.tools.tensor_descriptor",
    "triton.tools.tensor_descriptor.TensorDescriptor",
}

# torch.<name> paths a wrapper may use: allocation, dtypes, metadata, module plumbing.
TORCH_ALLOWED = {
    "torch.empty",
    "torch.empty_like",
    "torch.empty_strided",
    "torch.zeros",
    "torch.zeros_like",
    "torch.ones",
    "torch.ones_like",
    "torch.full",
    "torch.full_like",
    "torch.arange",
    "torch.tensor",
    "torch.Tensor",
    "torch.Size",
    "torch.device",
    "torch.dtype",
    "torch.no_grad",
    "torch.inference_mode",
    "torch.is_tensor",
    "torch.finfo",
    "torch.iinfo",
    "torch.is_floating_point",
    "torch.float16",
    "torch.float32",
    "torch.float64",
    "torch.bfloat16",
    "torch.half",
    "torch.float",
    "torch.double",
    "torch.int8",
    "torch.int16",
    "torch.int32",
    "torch.int64",
    "torch.uint8",
    "torch.bool",
    "torch.long",
    "torch.int",
    "torch.float8_e4m3fn",
    "torch.float8_e5m2",
    "torch.nn",
    "torch.nn.Module",
    "torch.nn.Parameter",
    "torch.nn.ParameterList",
    "torch.nn.ModuleList",
    "torch.nn.ParameterDict",
    "torch.nn.init",
    "torch.cuda",
    "torch.cuda.is_available",
    "torch.cuda.current_device",
    "torch.cuda.device_count",
    "torch.cuda.get_device_capability",
    "torch.cuda.get_device_properties",
    "torch.cuda.synchronize",
    "torch.cuda.device",
    # Which vendor's GPU a launch runs on (None on NVIDIA's CUDA): a wrapper picks NVIDIA-only
    # inline PTX by it, since ROCm builds call their GPUs "cuda" too.
    "torch.version.hip",
}
TORCH_ALLOWED_PREFIXES = ("torch.nn.init.",)
# Inside an ``__init__`` a candidate may build its parameters and constant buffers with any
# of torch's tensor functions (a causal mask ``torch.tril(torch.ones(n, n))``, a positional
# table from ``torch.sin``), as the spec's own constructors do: construction happens before
# any input exists, the harness then loads the reference's weights over the candidate's, and
# forward, where the work must happen in Triton, is still guarded at run time by the
# torch-op counter. Namespaces that reach beyond tensors stay refused there too.
INIT_REFUSED_PREFIXES = ("torch.ops", "torch._", "torch.utils", "torch.hub", "torch.jit", "torch.compile",
                         "torch.library", "torch.classes", "torch.cuda", "torch.backends", "torch.distributed",
                         "torch.multiprocessing", "torch.load", "torch.save", "torch.fx", "torch.export",
                         "torch.autograd", "torch.func", "torch.set_", "torch.use_deterministic")
INIT_ALLOWED = {
    "torch.randn",
    "torch.rand",
    "torch.randint",
    "torch.randperm",
    "torch.normal",
    "torch.linspace",
    "torch.sort",
    # Index buffers (register_buffer(..., persistent=False)) are not in the state_dict, so
    # __init__ must build them itself.
    "torch.triu_indices",
    "torch.tril_indices",
}
STREAM_PATHS = (
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.Event",
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.set_stream",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.cuda.ExternalStream",
)

# Tensor methods that compute; outside @triton.jit functions they mean PyTorch does the work.
COMPUTE_METHODS = {
    "sum",
    "mean",
    "prod",
    "exp",
    "exp2",
    "log",
    "log2",
    "log1p",
    "expm1",
    "softmax",
    "log_softmax",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "einsum",
    "add",
    "add_",
    "sub",
    "sub_",
    "mul",
    "mul_",
    "div",
    "div_",
    "pow",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "norm",
    "var",
    "std",
    "cumsum",
    "cumprod",
    "where",
    "clamp",
    "clamp_",
    "abs",
    "neg",
    "sin",
    "cos",
    "erf",
    "conv1d",
    "conv2d",
    "linear",
    "layer_norm",
    "rms_norm",
    "dot",
    "outer",
    "baddbmm",
    "topk",
    "softplus",
    "logsumexp",
    "square",
    "reciprocal",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "maximum",
    "minimum",
    "lerp",
    "addcmul",
    "addcdiv",
    "masked_fill",
    "masked_fill_",
    "scatter",
    "scatter_add",
    "gather",
    "index_select",
    "index_add",
    "cross",
    "diff",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
}
BANNED_CALLS = {
    "exec",
    "eval",
    "compile",
    "__import__",
    "open",
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "input",
    "setattr",
    "delattr",
    "memoryview",
    "help",
    "exit",
    "quit",
}
INTROSPECTION_ATTRS = {
    "_getframe",
    "f_locals",
    "f_globals",
    "f_back",
    "f_code",
    "gi_frame",
    "tb_frame",
    "co_consts",
    "_current_frames",
}
ALLOWED_DUNDERS = {"__init__", "__name__", "__future__"}


@dataclass(frozen=True)
class Violation:
    rule: str
    line: int
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.detail}"


def _is_triton_jit(decorator: ast.expr, aliases: dict[str, str]) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    path = _dotted(node, aliases)
    return path in {"triton.jit", "triton.autotune", "triton.heuristics"}


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``tl.sum`` -> ``triton.language.sum`` when ``tl`` is an import alias; else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _allowed_module(name: str) -> bool:
    return (name in ALLOWED_MODULES or name.startswith(ALLOWED_PREFIXES) or name in TORCH_ALLOWED
            or name in TRITON_ALLOWED or name.startswith("torch."))


def _triton_allowed(path: str) -> bool:
    """An allowed triton path, or an attribute of an allowed name that is not a module
    (``TensorDescriptor.from_tensor``, ``triton.Config`` fields)."""
    if path in TRITON_ALLOWED or path.startswith(ALLOWED_PREFIXES):
        return True
    return any(path.startswith(entry + ".") and not _is_module(entry) for entry in TRITON_ALLOWED)


def _is_module(path: str) -> bool:
    module = sys.modules.get(path)
    if module is None and (path in ALLOWED_MODULES or path in TRITON_ALLOWED):
        try:
            module = importlib.import_module(path)
        except ImportError:
            return False
    return isinstance(module, types.ModuleType)


def _reached_module(path: str) -> str | None:
    """The first module outside the allowlist that ``path`` reaches through attributes of an
    allowed module (``typing.sys`` is the ``sys`` module), read from the real modules without
    running any code of theirs; None when it reaches none. torch paths have their own
    allowlist."""
    parts = path.split(".")
    if parts[0] == "torch":
        return None
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if _allowed_module(name) and name != "__future__":
            try:
                obj: object = importlib.import_module(name)
            except ImportError:
                return None
            break
    else:
        return None
    for attr in parts[i:]:
        try:
            obj = inspect.getattr_static(obj, attr)
        except AttributeError:
            return None
        if isinstance(obj, types.ModuleType) and not _allowed_module(obj.__name__):
            return obj.__name__
    return None


def _is_nn_layer(path: str) -> bool:
    """``torch.nn.LayerNorm`` and friends: parameter containers a candidate may build to hold
    weights under the reference's state_dict names. Calling one in forward runs aten ops,
    which the runtime guard rejects."""
    parts = path.split(".")
    return len(parts) == 3 and parts[:2] == ["torch", "nn"] and parts[2][:1].isupper()


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.violations: list[Violation] = []
        self.jit_functions = 0
        self.jit_depth = 0
        self.init_depth = 0

    def flag(self, rule: str, node: ast.AST, detail: str) -> None:
        self.violations.append(Violation(rule, getattr(node, "lineno", 0), detail))

    # -- imports ---------------------------------------------------------------------------
    def _check_module(self, node: ast.AST, module: str) -> None:
        if module == "torch.nn.functional" or module.startswith(("torch.ops", "torch._")):
            self.flag("torch_compute", node, f"imports {module} (PyTorch would do the computation)")
        elif module not in ALLOWED_MODULES and not module.startswith(ALLOWED_PREFIXES):
            self.flag(
                "banned_import",
                node,
                f"imports {module!r}; a candidate may import only "
                f"{', '.join(sorted(ALLOWED_MODULES - {'__future__'}))}",
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        if node.level:
            self.flag("banned_import", node, "relative import")
            return
        self._check_module(node, module)
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if alias.name == "*":
                self.flag("banned_import", node, f"star import from {module}")
                continue
            self.aliases[alias.asname or alias.name] = full
            if module in ("torch", "torch.nn"):
                self._check_path(node, full)

    # -- attribute paths -------------------------------------------------------------------
    def _check_path(self, node: ast.AST, path: str) -> None:
        if self.init_depth and (path in INIT_ALLOWED or (
                path.startswith("torch.") and not path.startswith(INIT_REFUSED_PREFIXES))):
            return
        reached = _reached_module(path)
        if reached:
            self.flag("banned_import", node, f"{path} reaches module {reached!r}, which a candidate may not use")
        elif (path == "triton" or path.startswith("triton.")) and not _triton_allowed(path):
            self.flag("banned_import", node, f"uses {path}; of Triton a candidate may use only "
                      f"{', '.join(sorted(TRITON_ALLOWED - {'triton'}))} and triton.language")
        elif path.startswith(STREAM_PATHS):
            self.flag("streams", node, f"uses {path} (work off the default stream escapes the timer)")
        elif (
            path.startswith("torch.")
            and path not in TORCH_ALLOWED
            and not path.startswith(TORCH_ALLOWED_PREFIXES)
            and not _is_nn_layer(path)
        ):
            self.flag(
                "torch_compute", node, f"uses {path}; only allocation/view/metadata torch APIs are allowed"
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            self.flag("introspection", node, f"accesses dunder attribute {node.attr}")
        if node.attr in INTROSPECTION_ATTRS:
            self.flag("introspection", node, f"accesses {node.attr} (frame/interpreter introspection)")
        path = _dotted(node, self.aliases)
        if path is not None:
            self._check_path(node, path)
            return  # the inner prefix (torch.nn of torch.nn.Module) is implied by the full path
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        parent = getattr(node, "_kv_parent", None)
        if node.id in ("getattr", "hasattr") and not (isinstance(parent, ast.Call) and parent.func is node):
            self.flag("dynamic_code", node, f"uses {node.id} as a value (attribute access by computed name)")
        as_base = (isinstance(parent, ast.Attribute) and parent.value is node) or (
            isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "getattr"
            and parent.args and parent.args[0] is node)  # getattr(mod, "name"): checked as mod.name
        if node.id in self.aliases and _is_module(self.aliases[node.id]) and not as_base:
            # A module held in a variable or passed around escapes the attribute checks.
            self.flag("introspection", node, f"uses module {self.aliases[node.id]} as a value")
        if node.id == "Model":
            self.flag("reference_model", node, "refers to the reference Model")
        elif node.id == "__builtins__" or (node.id.startswith("__") and node.id not in ALLOWED_DUNDERS):
            self.flag("introspection", node, f"uses {node.id}")
        elif node.id in self.aliases and isinstance(node.ctx, ast.Load):
            self._check_path(node, self.aliases[node.id])

    # -- calls -----------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in BANNED_CALLS:
                self.flag("dynamic_code", node, f"calls {func.id}()")
            elif func.id == "getattr" and not (
                len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            ):
                self.flag("dynamic_code", node, "getattr() with a computed attribute name")
            elif func.id == "getattr" and isinstance(node.args[1].value, str):
                base = _dotted(node.args[0], self.aliases)
                if base is not None:
                    self._check_path(node, f"{base}.{node.args[1].value}")
        elif (isinstance(func, ast.Attribute) and self.jit_depth == 0 and self.init_depth == 0
              and func.attr in COMPUTE_METHODS):
            if _dotted(func, self.aliases) is None:  # a method on a value, not a module function
                self.flag(
                    "torch_compute",
                    node,
                    f"calls .{func.attr}() outside a Triton kernel "
                    "(tensor math must happen in @triton.jit code)",
                )
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and self.jit_depth == 0 and self.init_depth == 0:
            self.flag("torch_compute", node, "uses the @ operator outside a Triton kernel")
        self.generic_visit(node)

    # -- definitions -----------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        is_jit = any(_is_triton_jit(d, self.aliases) for d in node.decorator_list)
        is_init = node.name == "__init__"
        self.jit_functions += is_jit
        self.jit_depth += is_jit
        self.init_depth += is_init
        self.generic_visit(node)
        self.jit_depth -= is_jit
        self.init_depth -= is_init

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "Model":
                self.flag("reference_model", node, f"class {node.name} inherits the reference Model")
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        for handler in node.handlers:
            if not all(isinstance(stmt, ast.Raise) for stmt in handler.body):
                self.flag(
                    "try_fallback",
                    handler,
                    "an except block that does not re-raise (a fallback would hide a failing kernel)",
                )
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def _check_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            root = target
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.aliases:
                self.flag("monkeypatch", target, f"assigns to {ast.unparse(target)} (patching a module)")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._check_target(elt)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.flag("introspection", node, "uses a global statement (state that survives calls)")


# Most telling first: the first violation decides ``static:<rule>``, so an obfuscated torch
# call (``__import__('torch').softmax``) is reported as the obfuscation it is.
PRIORITY = (
    "dynamic_code",
    "introspection",
    "monkeypatch",
    "reference_model",
    "try_fallback",
    "streams",
    "banned_import",
    "torch_compute",
    "no_triton_kernel",
)


def kernel_count(source: str) -> int:
    """The ``@triton.jit`` (autotune, heuristics) functions ``source`` defines, through any
    import alias: each is compiled on its first launch. Raises SyntaxError."""
    checker = _Checker()
    checker.visit(ast.parse(source))
    return checker.jit_functions


def check_source(source: str) -> list[Violation]:
    """All violations in ``source``, most telling first (empty = clean). Raises SyntaxError."""
    tree = ast.parse(source)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child._kv_parent = parent  # type: ignore[attr-defined]
    checker = _Checker()
    checker.visit(tree)
    if checker.jit_functions == 0:
        checker.violations.append(Violation("no_triton_kernel", 0, "no @triton.jit kernel is defined"))
    return sorted(checker.violations, key=lambda v: (PRIORITY.index(v.rule), v.line))
