"""What precision a kernel's products ask for, read from its source (the report states it).

``tl.dot`` takes ``input_precision`` ("ieee": full float32, "tf32": TF32 tensor cores,
"tf32x3": three TF32 products, float32 accuracy) or the older ``allow_tf32``; without either,
float32 operands go through TF32. A keyword given by name (a constexpr set at launch, as the
KB templates do) is resolved to the string literals that name is given anywhere in the module.
Operand dtypes are not known from the source: for 16-bit operands the precision is moot.
"""

from __future__ import annotations

import ast

DEFAULT = "tf32 (default)"


def _literals(tree: ast.AST) -> dict[str, set[str]]:
    """Every string literal a name is assigned or passed as a keyword, by name."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        pairs: list[tuple[str, ast.expr]] = []
        if isinstance(node, ast.Assign):
            pairs = [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            pairs = [(node.target.id, node.value)]
        elif isinstance(node, ast.keyword) and node.arg:
            pairs = [(node.arg, node.value)]
        for name, value in pairs:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.setdefault(name, set()).add(value.value)
    return found


def dot_precisions(source: str) -> list[str]:
    """The distinct precisions the source's ``tl.dot`` calls ask for, sorted; [] without any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    literals = _literals(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dot"):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        value = keywords.get("input_precision")
        if value is None and "allow_tf32" in keywords:
            flag = keywords["allow_tf32"]
            out.add("ieee" if isinstance(flag, ast.Constant) and flag.value is False else DEFAULT)
        elif value is None:
            out.add(DEFAULT)
        elif isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.add(value.value)
        elif isinstance(value, ast.Name) and literals.get(value.id):
            out.update(literals[value.id])
        else:
            out.add("set at run time")
    return sorted(out)
