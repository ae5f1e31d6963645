"""Emit Triton statements for IR values, for the tile shapes the templates use.

The same emitter serves the flat elementwise kernel ([BLOCK] tiles), the row kernels
([ROWS, BLOCK_N] tiles) and matmul epilogues ([BLOCK_M, BLOCK_N] tiles): only the way
each operand role is loaded differs, which the caller passes as format strings.
"""
from __future__ import annotations

from services.generator.offline.lower import Program, Value
from services.generator.offline.ops import BINARY, REDUCE, UNARY, Unsupported

FLOAT_DTYPES = {"float32", "float16", "bfloat16", "float64"}


def assign_roles(program: Program, main_shape: list[int], axis: int | None = None,
                 allow_suffix: bool = False) -> None:
    """Decide how each operand broadcasts against the [rows, reduced axis] tile.

    full: the tile's own shape; rowvec: varies only along `axis` (a LayerNorm weight);
    colvec: one value per row (a keepdim reduction's shape); scalar: one element;
    suffix (only where the kernel indexes by flat offset, allow_suffix): equal to the
    tile's trailing dims and broadcast over the leading ones (an attention mask [S, S]
    shared by every head of [H, S, S]), read at `flat offset % its numel`.
    """
    d = len(main_shape) - 1 if axis is None else axis
    for op in program.operands:
        if program.heavy and op in _heavy_operands(program):
            op.role = "heavy"
            continue
        if op.dtype not in FLOAT_DTYPES:
            raise Unsupported(f"{op.expr} has dtype {op.dtype}; the pointwise/row templates handle float tensors")
        shape = op.shape
        aligned = [1] * (len(main_shape) - len(shape)) + list(shape) if len(shape) <= len(main_shape) else None
        others = [j for j in range(len(main_shape)) if j != d]
        if shape == main_shape:
            op.role = "full"
        elif _numel(shape) == 1:
            op.role = "scalar"
        elif aligned and aligned[d] == main_shape[d] and all(aligned[j] == 1 for j in others):
            op.role = "rowvec"
        elif aligned and aligned[d] == 1 and all(aligned[j] == main_shape[j] for j in others):
            op.role = "colvec"
        elif allow_suffix and aligned and _is_suffix(aligned, main_shape):
            op.role = "suffix"
        else:
            raise Unsupported(f"{op.expr} of shape {shape} broadcast against {main_shape}")
    refresh_kinds(program)


def refresh_kinds(program: Program) -> None:
    """Loads take their kind from their operand's role; derived values from their inputs."""
    role_kind = {"full": "row", "rowvec": "row", "suffix": "row", "colvec": "col", "scalar": "scalar", "heavy": "row"}
    for v in program.values:
        if v.op == "load":
            v.kind = role_kind[program.operands[v.operand].role]
        elif v.op in ("unary", "binary", "where"):
            kinds = {program.values[a].kind for a in v.args}
            v.kind = "row" if "row" in kinds else ("col" if "col" in kinds else "scalar")
        elif v.op == "acc":
            v.kind = "row"
        elif v.op == "reduce":
            v.kind = "col"


def _is_suffix(aligned: list[int], main_shape: list[int]) -> bool:
    """Leading dims all 1, the rest equal to the tile's: contiguous, it repeats every numel elements."""
    k = next((j for j, d in enumerate(aligned) if d != 1), len(aligned))
    return aligned[k:] == main_shape[k:]


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _heavy_operands(program: Program) -> list[object]:
    h = program.heavy
    assert h is not None
    idx = [h.a, h.b] + [i for i in (h.bias, h.c) if i >= 0]
    return [program.operands[i] for i in idx]


def needed(program: Program, roots: list[int], known: set[int] | None = None) -> set[int]:
    """Values the roots depend on, stopping at `known` ones (already computed)."""
    known = known or set()
    seen: set[int] = set()
    stack = [r for r in roots if r not in known]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        stack.extend(a for a in program.values[i].args if a not in known)
    return seen


def expr(program: Program, i: int, loads: dict[str, str]) -> str:
    """The right-hand side computing value i (reductions handled by the caller)."""
    v: Value = program.values[i]
    a = [f"v{j}" for j in v.args]
    if v.op == "load":
        role = program.operands[v.operand].role
        return loads[role].format(p=f"in{v.operand}_ptr", n=f"in{v.operand}_numel")
    if v.op == "const":
        return "(N * 1.0)" if v.const == "N" else v.const.replace("N", "(N * 1.0)") if "N" in v.const else v.const
    if v.op == "unary":
        return UNARY[v.fn].format(a=a[0], **v.params)
    if v.op == "binary":
        if v.fn == "div" and program.values[v.args[0]].kind == "row" and program.values[v.args[1]].kind != "row":
            # one reciprocal per row (or once), then multiplies: fp32 division is many instructions
            return f"({a[0]} * (1.0 / {a[1]}))"
        return BINARY[v.fn].format(a=a[0], b=a[1])
    if v.op == "where":
        return f"tl.where({a[0]}, {a[1]}, {a[2]})"
    if v.op == "acc":
        return "acc"
    raise Unsupported(f"value op {v.op}")


def reduce_line(program: Program, i: int, mask: str) -> str:
    v = program.values[i]
    ident, fn = REDUCE[v.fn]
    return f"v{i} = {fn}(tl.where({mask}, v{v.args[0]}, {ident}), axis=1)[:, None]"


def straight(program: Program, ids: set[int], loads: dict[str, str], mask: str = "mask") -> list[str]:
    """All of `ids` in SSA order, reductions over the whole tile row."""
    lines = []
    for i in sorted(ids):
        if program.values[i].op == "reduce":
            lines.append(reduce_line(program, i, mask))
        else:
            lines.append(f"v{i} = {expr(program, i, loads)}")
    return lines


def levels(program: Program) -> list[int]:
    """Reduction depth of each value: a reduction at level L needs L-1 earlier passes."""
    out: list[int] = []
    for v in program.values:
        lv = max((out[a] for a in v.args), default=0)
        out.append(lv + 1 if v.op == "reduce" else lv)
    return out


def looped(program: Program, loads: dict[str, str], store: str) -> list[str]:
    """Multi-pass row body for rows too long for registers.

    Pass L re-reads the row in BLOCK_N chunks to finish the reductions of level L (their
    inputs depend only on the row and on reductions of lower levels, already known as
    per-row values); the last pass computes and stores the output.
    """
    lv = levels(program)
    need = needed(program, [program.out])
    lines: list[str] = []
    done: set[int] = set()

    def per_row_ready(level: int) -> None:
        for i in sorted(need - done):
            v = program.values[i]
            if v.kind != "row" and v.op != "reduce" and lv[i] <= level and all(a in done for a in v.args):
                lines.append(f"v{i} = {expr(program, i, loads)}")
                done.add(i)

    per_row_ready(0)
    top = max((lv[i] for i in need), default=0)
    for level in range(1, top + 1):
        reds = [i for i in sorted(need) if program.values[i].op == "reduce" and lv[i] == level]
        if reds:
            for r in reds:
                ident, _ = REDUCE[program.values[r].fn]
                lines.append(f"acc{r} = tl.full([ROWS, BLOCK_N], {ident}, tl.float32)")
            lines.append("for start in range(0, N, BLOCK_N):")
            body = ["cols = start + tl.arange(0, BLOCK_N)", "col_ok = cols < N",
                    "mask = row_ok[:, None] & col_ok[None, :]", "offs = base + cols[None, :] * INNER"]
            chunk = needed(program, [program.values[r].args[0] for r in reds], done)
            for i in sorted(chunk):
                if program.values[i].kind == "row" and i not in done:
                    body.append(f"v{i} = {expr(program, i, loads)}")
            for r in reds:
                ident, fn = REDUCE[program.values[r].fn]
                combine = {"sum": "acc{r} + {x}", "max": "tl.maximum(acc{r}, {x})", "min": "tl.minimum(acc{r}, {x})"}
                x = f"tl.where(mask, v{program.values[r].args[0]}, {ident})"
                body.append(f"acc{r} = " + combine[program.values[r].fn].format(r=r, x=x))
            lines.extend("    " + b for b in body)
            for r in reds:
                _, fn = REDUCE[program.values[r].fn]
                lines.append(f"v{r} = {fn}(acc{r}, axis=1)[:, None]")
                done.add(r)
        per_row_ready(level)
    out_v = program.values[program.out]
    if out_v.kind == "row":
        lines.append("for start in range(0, N, BLOCK_N):")
        body = ["cols = start + tl.arange(0, BLOCK_N)", "col_ok = cols < N",
                "mask = row_ok[:, None] & col_ok[None, :]", "offs = base + cols[None, :] * INNER"]
        for i in sorted(needed(program, [program.out], done)):
            body.append(f"v{i} = {expr(program, i, loads)}")
        body.append(store.format(v=f"v{program.out}"))
        lines.extend("    " + b for b in body)
    else:
        lines.append(store.format(v=f"v{program.out}"))
    return lines
