"""Context builders: turn a lowered Program (plus the spec's parts) into template variables.

Each template's `codegen` names one builder here. Builders raise Unsupported for programs
their template's pattern admits but the kernel cannot serve (e.g. odd broadcasting).
"""
from __future__ import annotations

import textwrap
from typing import Any

from services.generator.offline import emit
from services.generator.offline.families_rec import REC_BUILDERS
from services.generator.offline.lower import Program
from services.generator.offline.ops import DoesNotFit, Unsupported
from services.generator.offline.specparts import SpecParts


def _indent(lines: list[str], n: int) -> str:
    return textwrap.indent("\n".join(lines), " " * n)


def _common(program: Program, parts: SpecParts, tunables: dict[str, str], title: str) -> dict[str, Any]:
    return {
        "title": title,
        # The template imports torch, nn, triton and tl itself.
        "imports": "\n".join(line for line in parts.imports.splitlines()
                             if line not in {"import torch", "import torch.nn as nn", "import triton",
                                             "import triton.language as tl"}),
        "init_source": parts.init_source,
        "forward_params": parts.forward_params,
        "signature": program.signature(),
        "tunables_text": ", ".join(f"{k}={v}" for k, v in tunables.items()),
        **tunables,
    }


def _main_operand(program: Program) -> int:
    """The tensor whose shape is the tile (largest input; ties: first)."""
    best, size = -1, -1
    for i, op in enumerate(program.operands):
        if op.role == "heavy":
            continue
        n = 1
        for d in op.shape:
            n *= d
        if n > size:
            best, size = i, n
    if best < 0:
        raise Unsupported("no tensor input to read")
    return best


def _dtype_expr(program: Program, main: int) -> str:
    if program.out_dtype == program.operands[main].dtype:
        return "main.dtype"
    return f"torch.{program.out_dtype}"


def _prologue(program: Program, main: int, out_shape: str) -> tuple[list[str], str]:
    lines = [f"main = ({program.operands[main].expr}).contiguous()",
             "n_last = main.shape[-1] if main.dim() > 0 else 1"]
    call = ""
    for i, op in enumerate(program.operands):
        lines.append(f"in{i} = ({op.expr}).contiguous()")
        # a suffix-broadcast operand repeats every numel() elements of the flat index
        call += f"in{i}, in{i}.numel(), " if op.role == "suffix" else f"in{i}, "
    lines.append(f"out = torch.empty({out_shape}, dtype={_dtype_expr(program, main)}, device=main.device)")
    return lines, call


def _ptr_params(program: Program) -> str:
    return "".join(f"in{i}_ptr, in{i}_numel, " if op.role == "suffix" else f"in{i}_ptr, "
                   for i, op in enumerate(program.operands))


FLAT_LOADS = {
    "full": "tl.load({p} + offs, mask=mask, other=0.0).to(tl.float32)",
    "rowvec": "tl.load({p} + offs % N, mask=mask, other=0.0).to(tl.float32)",
    "colvec": "tl.load({p} + offs // N, mask=mask, other=0.0).to(tl.float32)",
    "suffix": "tl.load({p} + offs % {n}, mask=mask, other=0.0).to(tl.float32)",
    "scalar": "tl.load({p}).to(tl.float32)",
}

TILE_LOADS = {
    "full": "tl.load({p} + offs, mask=mask, other=0.0).to(tl.float32)",
    "rowvec": "tl.load({p} + cols[None, :], mask=col_ok[None, :], other=0.0).to(tl.float32)",
    "colvec": "tl.load({p} + rows[:, None], mask=row_ok[:, None], other=0.0).to(tl.float32)",
    # offs is the flat index into the tile's tensor (strided rows included)
    "suffix": "tl.load({p} + offs % {n}, mask=mask, other=0.0).to(tl.float32)",
    "scalar": "tl.load({p}).to(tl.float32)",
}


def _streaming(loads: dict[str, str], tunables: dict[str, str], read_mostly: bool = False) -> dict[str, str]:
    """The load table with the EVICT tunable's L2 hint on "full" operands (read exactly once).

    ``evict_first`` lets the lines a kernel streams through leave L2 before others, so a read
    of a tensor larger than L2 does not push out (and, for dirty lines, write back) what the
    previous kernel left there. Only for single-pass kernels: a multi-pass kernel re-reads.
    ``auto`` asks for it where the kernel reads far more than it writes (a row reduction):
    on the H100 that took row sum/max of 8192x4096 fp16 from 0.0326 to 0.0278 ms, while
    kernels writing as much as they read were 0.2-1% slower with it
    (docs/measurements/2026-11-23-suite-cuda-h100/template_sweep_h100_evict.md)."""
    mode = tunables.get("EVICT", "normal")
    if mode == "normal" or (mode == "auto" and not read_mostly):
        return loads
    return {**loads, "full": loads["full"].replace("other=0.0)", "other=0.0, eviction_policy=\"evict_first\")")}


def build_pointwise(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    main = _main_operand(program)
    main_shape = program.operands[main].shape
    if program.out_shape != main_shape:
        raise Unsupported(f"output shape {program.out_shape} differs from the largest input's {main_shape}")
    emit.assign_roles(program, main_shape, allow_suffix=True)
    body = emit.straight(program, emit.needed(program, [program.out]), _streaming(FLAT_LOADS, tunables))
    # A chain that only reads parameters/constants still needs a [BLOCK] tile to store.
    if program.values[program.out].kind != "row":
        body.append(f"v{program.out} = v{program.out} + tl.zeros([BLOCK], tl.float32)")
    pro, call = _prologue(program, main, "main.shape")
    return {**_common(program, parts, tunables, "Fused elementwise chain: " + program.signature()),
            "ptr_params": _ptr_params(program), "body": _indent(body, 4), "out": program.out,
            "prologue": _indent(pro, 8), "call_args": call}


def build_row(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    main = _main_operand(program)
    main_shape = program.operands[main].shape
    axis = len(main_shape) - 1
    if program.reduce_axis is not None:
        axis, ndim = program.reduce_axis
        if ndim != len(main_shape):
            raise Unsupported(f"a reduction over a {ndim}-d tensor while the largest input is {len(main_shape)}-d")
    emit.assign_roles(program, main_shape, axis, allow_suffix=True)
    out_v = program.values[program.out]
    if out_v.kind == "row":
        if program.out_shape != main_shape:
            raise Unsupported(f"output shape {program.out_shape} differs from the row shape {main_shape}")
        out_shape = "main.shape"
        store = "tl.store(out_ptr + offs, {v}.to(out_ptr.dtype.element_ty), mask=mask)"
    elif out_v.kind == "col":
        keep = len(program.out_shape) == len(main_shape)
        out_shape = (f"(*main.shape[:{axis}], 1, *main.shape[{axis} + 1:])" if keep
                     else f"(*main.shape[:{axis}], *main.shape[{axis} + 1:])")
        store = "tl.store(out_ptr + rows[:, None], {v}.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])"
    else:
        raise Unsupported("output does not depend on the input rows")
    need = emit.needed(program, [program.out])
    whole = emit.straight(program, need, _streaming(TILE_LOADS, tunables, read_mostly=out_v.kind == "col"))
    looped = _online_softmax(program, store) or emit.looped(program, TILE_LOADS, store)
    lv = emit.levels(program)
    rows = tunables.get("ROWS", "auto")
    warps = tunables.get("num_warps", "auto")
    pro, call = _prologue(program, main, out_shape)
    ctx = _common(program, parts, tunables, "Row-wise fused kernel: " + program.signature())
    ctx.update({
        "ptr_params": _ptr_params(program), "whole_body": _indent(whole, 4), "whole_store": store.format(v=f"v{program.out}"),
        "looped_body": _indent(looped, 4), "prologue": _indent(pro, 8), "call_args": call,
        "passes": max((lv[i] for i in need), default=0),
        "AXIS": axis,
        # auto: ~4k elements per program (enough to hide latency, few enough to stay in registers)
        "ROWS_EXPR": "max(1, min(16, 4096 // block_n))" if rows == "auto" else rows,
        # strided rows (reduced axis not last): enough adjacent inner indices to coalesce
        "STRIDED_ROWS_EXPR": "min(64, triton.next_power_of_2(inner))" if rows == "auto"
        else f"min({rows} * 8, triton.next_power_of_2(inner))",
        "WARPS_EXPR": "max(1, min(16, (rows * block_n) // 512))" if warps == "auto" else warps,
        "LOOP_WARPS": f"max(1, min(16, {tunables.get('LOOP_BLOCK', '1024')} // 256))" if warps == "auto" else warps,
    })
    return ctx


_ONLINE = """\
m = tl.full([ROWS, BLOCK_N], -float("inf"), tl.float32)
s = tl.zeros([ROWS, BLOCK_N], tl.float32)
for start in range(0, N, BLOCK_N):
    cols = start + tl.arange(0, BLOCK_N)
    mask = row_ok[:, None] & (cols[None, :] < N)
    x = tl.where(mask, {load}, -float("inf"))
    m_new = tl.maximum(m, x)
    # rescale the running sum to the new max; lanes that saw nothing yet stay 0
    alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
    s = s * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
    m = m_new
m_row = tl.max(m, axis=1)[:, None]
s_row = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - m_row)), axis=1)[:, None]
for start in range(0, N, BLOCK_N):
    cols = start + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    offs = base + cols[None, :] * INNER
    x = {load}
    y = {result}
    {store}"""


def _online_softmax(program: Program, store: str) -> list[str] | None:
    """Softmax/log-softmax of one input: the online form reads long rows twice, not three times.

    The generic looped kernel needs a pass for the max, one for the sum and one to write;
    keeping a running max with a rescaled running sum merges the first two.
    """
    sig = program.signature()
    result = {"max sub exp sum div": "tl.exp(x - m_row) / s_row",
              "max sub exp sum sub log sub": "x - m_row - tl.log(s_row)"}.get(sig)
    loads = [v for v in program.values if v.op == "load"]
    if result is None or len(loads) != 1 or program.operands[loads[0].operand].role != "full":
        return None
    load = TILE_LOADS["full"].format(p=f"in{loads[0].operand}_ptr").replace("offs", "(base + cols[None, :] * INNER)")
    return _ONLINE.format(load=load, result=result, store=store.format(v="y")).splitlines()


def _epilogue_inputs(program: Program) -> tuple[list[str], str]:
    lines, call = [], ""
    for i, op in enumerate(program.operands):
        if op.role != "heavy":
            lines.append(f"in{i} = ({op.expr}).contiguous()")
            call += f"in{i}, "
    return lines, call


def _epilogue_ptrs(program: Program) -> str:
    return "".join(f"in{i}_ptr, " for i, op in enumerate(program.operands) if op.role != "heavy")


def _gemm_common(program: Program, parts: SpecParts, tunables: dict[str, str], title: str,
                 loads: dict[str, str]) -> dict[str, Any]:
    heavy = program.heavy
    if heavy is None:
        raise Unsupported("no matmul/conv in the graph")
    if program.values[program.out].kind != "row" or program.out_shape != heavy.out_shape:
        raise Unsupported(f"epilogue output shape {program.out_shape} differs from the GEMM's {heavy.out_shape}")
    emit.assign_roles(program, heavy.out_shape)
    a, b = program.operands[heavy.a], program.operands[heavy.b]
    for op in (a, b):
        if op.dtype not in emit.FLOAT_DTYPES:
            raise Unsupported(f"{op.expr} has dtype {op.dtype}; the GEMM templates handle float tensors")
    body = emit.straight(program, emit.needed(program, [program.out]), loads)
    lines, call = _epilogue_inputs(program)
    # The templates name the GEMM's A operand mat_a (matmul) or conv_x (conv1d).
    a_var = "conv_x" if heavy.kind == "conv1d" else "mat_a"
    out_dtype = f"{a_var}.dtype" if program.out_dtype == a.dtype else f"torch.{program.out_dtype}"
    bias = program.operands[heavy.bias] if heavy.bias >= 0 else None
    return {**_common(program, parts, tunables, title), "ptr_params": _epilogue_ptrs(program),
            "body": _indent(body, 4), "out": program.out, "epilogue_inputs": lines, "call_args": call,
            "a_expr": a.expr, "b_expr": b.expr, "bias_expr": bias.expr if bias else "None",
            "bias_full": "True" if bias is not None and bias.shape == heavy.out_shape else "False",
            "out_dtype": out_dtype}


def build_matmul(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    heavy = program.heavy
    if heavy is None or heavy.kind not in ("linear", "mm", "bmm"):
        raise Unsupported("no linear/mm/bmm in the graph")
    bias = program.operands[heavy.bias] if heavy.bias >= 0 else None
    if bias is not None and len(bias.shape) > 1 and bias.shape != heavy.out_shape:
        raise Unsupported(f"GEMM bias of shape {bias.shape}")
    ctx = _gemm_common(program, parts, tunables, "GEMM with fused epilogue: " + program.signature(), TILE_LOADS)
    ctx.update(batched=heavy.kind == "bmm", b_transposed=heavy.b_transposed, alpha=repr(heavy.alpha),
               beta=repr(heavy.beta))
    if program.has_reduce:
        # Row reductions in the epilogue (a norm after the GEMM): one program owns whole output
        # rows, so BLOCK_N is the row length rounded up and the reductions run on the registers.
        if program.reduce_axis != (len(heavy.out_shape) - 1, len(heavy.out_shape)):
            raise Unsupported("an epilogue reduction over a GEMM output axis other than the last")
        _row_tile_fits(program, tunables)
        ctx.update(title="GEMM with a fused row epilogue: " + program.signature(),
                   BLOCK_N="triton.next_power_of_2(n_cols)", GROUP_M="1")
    else:
        _tile_fits(program, tunables)
    return ctx


# The shared memory one program may take on the GPUs served: the A100's opt-in maximum
# (163 KB; an H100's or H200's is 227 KB), so a kernel that compiles on one compiles on all.
SHARED_MEMORY_BYTES = 166912
# The most shared memory one program may take on a Hopper GPU (H100, H200: 227 KB), the
# largest of the GPUs served: a GEMM tile set needing more fails to compile on every one.
HOPPER_SHARED_MEMORY_BYTES = 232448
# The fp32 accumulator values a thread may hold before the compiler spills them.
ACCUMULATOR_PER_THREAD = 256


def _padded_row(shape: list[int]) -> int:
    """The output row rounded up to a power of two: the BLOCK_N of a whole-row tile."""
    return 1 << max(0, int(shape[-1]) - 1).bit_length()


def _pipeline_bytes(program: Program, bm: int, bn: int, bk: int, stages: int) -> int:
    """Shared memory a GEMM's software pipeline holds: ``stages`` tiles of A (bm x bk) and of
    B (bk x bn), 2-byte elements for 16-bit operands, else 4."""
    heavy = program.heavy
    assert heavy is not None
    size = 2 if program.operands[heavy.a].dtype in ("float16", "bfloat16") else 4
    return (bm * bk + bk * bn) * size * stages


def _row_tile_fits(program: Program, tunables: dict[str, str]) -> None:
    """Raises DoesNotFit when a whole-row GEMM tile at these tunables overflows shared memory
    (each pipeline stage holds a BLOCK_M x BLOCK_K tile of A and a BLOCK_K x row tile of B) or
    the threads' registers (the BLOCK_M x row accumulator): a 2048-wide float32 row at
    32 x 32 over two stages asked for 520 KB and failed to compile on an H200."""
    heavy = program.heavy
    assert heavy is not None
    row = _padded_row(heavy.out_shape)
    bm, bk = int(tunables.get("BLOCK_M", "32")), int(tunables.get("BLOCK_K", "32"))
    stages, warps = max(1, int(tunables.get("num_stages", "1"))), int(tunables.get("num_warps", "4"))
    shared = _pipeline_bytes(program, bm, row, bk, stages)
    if shared > SHARED_MEMORY_BYTES:
        raise DoesNotFit(f"a {bm} x {row} row tile over {stages} stages of BLOCK_K={bk} needs {shared} bytes of "
                         f"shared memory (at most {SHARED_MEMORY_BYTES})")
    if bm * row > ACCUMULATOR_PER_THREAD * 32 * warps:
        raise DoesNotFit(f"a {bm} x {row} float32 accumulator is over {ACCUMULATOR_PER_THREAD} values per thread "
                         f"of {warps} warps")


# A tensor descriptor's rows start on 16-byte boundaries, and a tile spans at most 256
# elements a side (kb/templates/matmul_tma.py.j2 refuses others with a ValueError).
DESCRIPTOR_ALIGN_BYTES = 16
DESCRIPTOR_SPAN = 256


def build_matmul_tma(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    """build_matmul for the descriptor-fed templates, refusing what their descriptors refuse
    at the traced sizes (the ones the candidate is screened at): contiguous operand rows not
    a whole number of 16-byte units (a 63-wide float32 A), and whole-row tiles wider than
    256. Drafting such a candidate only spends one of the job's candidates on a certain
    RUNTIME_ERROR (three of a job's three, on a linear of 63 inputs screened on the CPU)."""
    heavy = program.heavy
    if heavy is not None:
        for name, index in (("A", heavy.a), ("B", heavy.b)):
            op = program.operands[index]
            size = {"float16": 2, "bfloat16": 2, "float64": 8}.get(op.dtype, 4)
            if op.shape and (int(op.shape[-1]) * size) % DESCRIPTOR_ALIGN_BYTES:
                raise Unsupported(f"a tensor descriptor needs {DESCRIPTOR_ALIGN_BYTES}-byte aligned rows; {name} "
                                  f"({op.expr}, {op.shape} of {op.dtype}) has rows of {int(op.shape[-1]) * size} bytes")
        row = _padded_row(heavy.out_shape) if heavy.out_shape else 0
        if program.has_reduce and row > DESCRIPTOR_SPAN:
            raise Unsupported(f"a whole-row tile of {row} columns is wider than a descriptor's {DESCRIPTOR_SPAN}")
    return build_matmul(program, parts, tunables)


def _tile_fits(program: Program, tunables: dict[str, str]) -> None:
    """Raises DoesNotFit when a GEMM tile set's pipeline (num_stages tiles of A, BLOCK_M x
    BLOCK_K, and of B, BLOCK_K x BLOCK_N) needs more shared memory than any GPU served has:
    a float32 128 x 256 x 64 set over three stages asked for 352 KB on an H200 and failed to
    compile (2026-11-28, a logit soft-cap's projection). Sets that fit a Hopper GPU but not
    an A100 stay: the float32 default measured best on H100 and H200 (128 x 128 x 64 over
    three stages, 192 KB) is one of them."""
    try:
        bm, bn, bk = (int(tunables[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        stages = max(1, int(tunables.get("num_stages", "1")))
    except (KeyError, ValueError):
        return  # a tile given by expression is sized at run time
    shared = _pipeline_bytes(program, bm, bn, bk, stages)
    if shared > HOPPER_SHARED_MEMORY_BYTES:
        raise DoesNotFit(f"a {bm} x {bn} x {bk} tile over {stages} stages needs {shared} bytes of shared memory "
                         f"(at most {HOPPER_SHARED_MEMORY_BYTES})")


def build_gemm_chain(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    heavy = program.heavy
    if heavy is None or heavy.kind not in ("mm_chain", "bmm_chain") or heavy.c < 0:
        raise Unsupported("no chained matmul A @ (B @ C) in the graph")
    c = program.operands[heavy.c]
    if c.dtype != program.operands[heavy.a].dtype or c.dtype != program.operands[heavy.b].dtype:
        raise Unsupported("chained matmul operands of different dtypes")
    ctx = _gemm_common(program, parts, tunables, "Chained GEMM A(BC) with fused epilogue: " + program.signature(),
                       TILE_LOADS)
    ctx.update(batched=heavy.kind == "bmm_chain", c_expr=c.expr)
    return ctx


CONV_LOADS = {
    "full": "tl.load({p} + offs, mask=mask, other=0.0).to(tl.float32)",
    "rowvec": "tl.load({p} + lout[:, None], mask=rm[:, None] < B * L_out, other=0.0).to(tl.float32)",
    "colvec": "tl.load({p} + bidx[:, None] * C_out + rn[None, :], mask=mask, other=0.0).to(tl.float32)",
    "scalar": "tl.load({p}).to(tl.float32)",
}


def build_conv1d(program: Program, parts: SpecParts, tunables: dict[str, str],
                 loads: dict[str, str] = CONV_LOADS, title: str = "Conv1d implicit GEMM") -> dict[str, Any]:
    heavy = program.heavy
    if heavy is None or heavy.kind != "conv1d":
        raise Unsupported("no conv1d in the graph")
    if len(program.operands[heavy.a].shape) != 3:
        raise Unsupported("conv1d on an unbatched (2-D) input")
    ctx = _gemm_common(program, parts, tunables, f"{title}: " + program.signature(), loads)
    ctx.update({k: str(v) for k, v in heavy.conv.items()})
    return ctx


# conv1d_ncl's tile is [output channels, positions] of one batch row b.
CONV_NCL_LOADS = {
    "full": "tl.load({p} + offs, mask=mask, other=0.0).to(tl.float32)",
    "rowvec": "tl.load({p} + lpos[None, :], mask=l_ok[None, :], other=0.0).to(tl.float32)",
    "colvec": "tl.load({p} + b * C_out + co[:, None], mask=co_ok[:, None], other=0.0).to(tl.float32)",
    "scalar": "tl.load({p}).to(tl.float32)",
}


def build_conv1d_ncl(program: Program, parts: SpecParts, tunables: dict[str, str]) -> dict[str, Any]:
    return build_conv1d(program, parts, tunables, CONV_NCL_LOADS, "Conv1d in NCL tiles")


BUILDERS: dict[str, Any] = {"pointwise": build_pointwise, "row": build_row, "matmul": build_matmul,
                            "matmul_tma": build_matmul_tma, "conv1d": build_conv1d, "conv1d_ncl": build_conv1d_ncl,
                            "gemm_chain": build_gemm_chain, **REC_BUILDERS}
