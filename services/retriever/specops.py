"""What operators a spec computes, read from its source with ast (the spec is never executed here).

``torch.softmax(x)``, ``F.gelu(x)``, ``x.sum(-1)``, ``a @ b`` and modules built in
``__init__`` (``self.fc = nn.Linear(...)`` then ``self.fc(x)``) all count. The names feed
the retrieval query, so a softmax spec pulls the online-softmax guidance.
"""

from __future__ import annotations

import ast

_BINOPS: dict[type[ast.operator], str] = {
    ast.MatMult: "matmul", ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
}
# Calls that shape or move data rather than compute; they say nothing about the kernel's kind.
_IGNORED = {
    "super", "__init__", "contiguous", "view", "reshape", "size", "dim", "to", "float", "half", "shape",
    "unsqueeze", "squeeze", "expand", "permute", "transpose", "flatten", "clone", "detach", "type", "len",
    "range", "int", "numel", "stride", "cpu", "cuda", "item", "empty", "empty_like", "zeros", "ones",
}

# Retrieval terms per operator family: the words the guidance uses for them.
OP_TERMS: dict[str, str] = {
    "softmax": "softmax online reductions max exp", "log_softmax": "softmax online log reductions max",
    "layer_norm": "layernorm mean variance welford reductions", "rms_norm": "rmsnorm mean square reductions", "rmsnorm": "rmsnorm mean square reductions",
    "group_norm": "mean variance welford reductions", "batch_norm": "mean variance reductions",
    "norm": "reductions sqrt", "matmul": "matmul tl.dot tensor cores tiles", "mm": "matmul tl.dot tiles",
    "bmm": "batched matmul tl.dot tiles", "linear": "matmul tl.dot epilogue bias fusion",
    "einsum": "matmul tl.dot", "addmm": "matmul tl.dot bias epilogue", "conv1d": "convolution tl.dot tiles",
    "conv2d": "convolution tl.dot tiles", "gelu": "gelu erf precision activation",
    "tanh": "tanh activation", "sigmoid": "sigmoid activation", "silu": "sigmoid activation",
    "relu": "activation elementwise", "sum": "reductions sum", "mean": "reductions mean",
    "max": "reductions max", "amax": "reductions max", "min": "reductions min", "argmax": "reductions argmax",
    "cumsum": "scan prefix sum", "var": "variance welford reductions", "std": "variance welford reductions",
    "gather": "gather indices", "index_select": "gather indices", "embedding": "embedding gather indices",
    "add": "elementwise fusion", "mul": "elementwise fusion", "div": "elementwise fusion",
    "exp": "exp elementwise", "log": "log elementwise", "sqrt": "sqrt rsqrt",
}


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _modules_built_in_init(cls: ast.ClassDef) -> dict[str, str]:
    """``self.fc = nn.Linear(...)`` -> {"fc": "linear"}."""
    out: dict[str, str] = {}
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
            for node in ast.walk(fn):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Attribute)):
                    name = _call_name(node.value.func)
                    if name and name[0].isupper():  # a module class, e.g. nn.LayerNorm
                        out[node.targets[0].attr] = _snake(name)
    return out


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper() and not name[i - 1].isdigit():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def spec_ops(source: str) -> list[str]:
    """Operator names used by ``Model.forward``, in order of first use; [] if the source doesn't parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if model is None:
        return []
    submodules = _modules_built_in_init(model)
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        return []
    ops: list[str] = []
    for node in ast.walk(forward):
        name = ""
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                name = submodules.get(func.attr, "")
            else:
                name = _call_name(func)
        elif isinstance(node, ast.BinOp):
            name = _BINOPS.get(type(node.op), "")
        name = name.lower()
        if name and name not in _IGNORED and name not in ops:
            ops.append(name)
    return ops


def op_terms(ops: list[str]) -> list[str]:
    terms: list[str] = []
    for op in ops:
        terms.append(op)
        terms.extend(OP_TERMS.get(op, "").split())
    return terms
