"""Attention, ``softmax(f(Q K^T)) V``, as one kernel that never stores the scores.

The graph holds attention as two matrix products around a softmax (however the spec wrote
it: by hand, through ``F.scaled_dot_product_attention``, with a scale, a causal or padding
mask, heads folded into the batch): ``S = bmm(Q, K^T)``, ``g = f(S, ...)`` pointwise,
``P = exp(g - max g) / sum exp(g - max g)`` over the last dim, ``O = bmm(P, V)``.
:func:`find` recognises that shape in the captured nodes; the first product becomes a
:class:`ScoresValue`, and the second product is lowered as a streaming kernel: each program
takes a block of query rows, walks the keys in blocks, computes the score tile, applies
``f`` to it through ``g``'s own loaders, and keeps a running max, sum and output
(the online softmax), so the scores never reach memory.

Anything else reading the scores or the probabilities still gets them: those reads store
the first product on their own, exactly as without this kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from services.generator.lowering import tunables
from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import Buffer, KernelWriter, Stored, Value
from services.generator.lowering.kernels import Kernel, LaunchShape, batched_form_ok, kernel_args, pow2, tl_type
from services.generator.lowering.ops_heavy import (SMEM_BUDGET, accumulator_type, dot_operand, dot_precision,
                                                  dot_type, rounded)
from services.generator.lowering.rows import same_index
from services.generator.lowering.schema import CapturedCase, Node

# Nodes between the probabilities and the second product that only reshape or retype them.
_TRANSPARENT = {"prims.collapse_view.default", "prims.collapse.default", "prims.split_dim.default",
                "prims.reshape.default", "prims.view_of.default", "prims.convert_element_type.default",
                "prims.clone.default", "aten.view.default", "aten._unsafe_view.default", "aten.clone.default",
                "prims.broadcast_in_dim.default"}
_REDUCING = ("prims.sum.", "prims.amax.", "prims.amin.", "prims.prod.", "prims.var.", "prims.xor_sum.",
             "aten.argmax.", "aten.argmin.", "aten.cumsum.", "aten.cumprod.", "aten.sort.", "aten.topk.")
MAX_HEAD = 256  # value rows wider than this keep the two-product form


@dataclass
class Match:
    scores: str        # the first product (bmm)
    logits: str        # g: the value the softmax normalises
    chain: list[str]   # reshapes between the probabilities and the second product, outermost first
    zero_empty_rows: bool = False  # a row with no finite logit gives zeros (as SDPA guards it), not NaN


def _ref(value: Any) -> str | None:
    return value["ref"] if isinstance(value, dict) and "ref" in value else None


def find(case: CapturedCase) -> dict[str, Match]:
    """Second products (by node name) whose first operand is a softmax over the last dim of
    a pointwise function of one earlier product."""
    nodes = {n.name: n for n in case.nodes}
    found: dict[str, Match] = {}
    for node in case.nodes:
        if node.target != "aten.bmm.default":
            continue
        chain: list[str] = []
        cur = nodes.get(_ref(node.args[0]) or "")
        while cur is not None and cur.target in _TRANSPARENT:
            chain.append(cur.name)
            cur = nodes.get(_ref(cur.args[0]) or "")
        guard = cur
        division = _empty_row_guard(nodes, cur)
        match = _softmax(nodes, division if division is not None else cur)
        if match is None:
            continue
        logits, _dims = match
        scores = _scores(nodes, logits)
        if scores is None:
            continue
        if division is not None and (guard is None or not _guards_rows_of(
                nodes, nodes.get(_ref(guard.args[0]) or ""), logits)):
            continue
        found[node.name] = Match(scores, logits, chain, zero_empty_rows=division is not None)
    return found


def _empty_row_guard(nodes: dict[str, Node], node: Node | None) -> Node | None:
    """``where(row has no finite logit, 0, softmax)``: the softmax division it guards."""
    if node is None or node.target != "prims.where.default" or len(node.args) < 3:
        return None
    zeros = nodes.get(_ref(node.args[1]) or "")
    if zeros is None or zeros.target not in ("aten.full_like.default", "prims.full_like.default") \
            or zeros.args[1] not in (0, 0.0):
        return None
    return nodes.get(_ref(node.args[2]) or "")


def _guards_rows_of(nodes: dict[str, Node], cond: Node | None, logits: str) -> bool:
    """Whether ``cond`` tests, per row, that no logit of ``logits`` is finite (the only use of
    such a guard: an ``eq(g, -inf)`` somewhere below it, and no other tensor)."""
    seen: set[str] = set()
    stack = [cond.name] if cond is not None else []
    tested = False
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        node = nodes.get(name)
        if node is None:
            return False
        if node.target == "prims.eq.default" and _ref(node.args[0]) == logits:
            tested = True
            continue
        stack.extend(_refs(node.args))
    return tested


def _through_broadcasts(nodes: dict[str, Node], node: Node | None) -> Node | None:
    """The value a chain of broadcasts (keepdim, then to the full shape) starts from."""
    while node is not None and node.target == "prims.broadcast_in_dim.default":
        node = nodes.get(_ref(node.args[0]) or "")
    return node


def _softmax(nodes: dict[str, Node], div: Node | None) -> tuple[str, list[int]] | None:
    """``exp(g - bcast(amax g)) / bcast(sum exp(...))`` over the last dim: (g, dims)."""
    if div is None or div.target != "prims.div.default":
        return None
    e = nodes.get(_ref(div.args[0]) or "")
    s = _through_broadcasts(nodes, nodes.get(_ref(div.args[1]) or ""))
    if e is None or e.target != "prims.exp.default":
        return None
    if s is None or s.target != "prims.sum.default" or _ref(s.args[0]) != e.name:
        return None
    sub = nodes.get(_ref(e.args[0]) or "")
    if sub is None or sub.target != "prims.sub.default":
        return None
    g_name = _ref(sub.args[0])
    m = _through_broadcasts(nodes, nodes.get(_ref(sub.args[1]) or ""))
    if g_name is None or m is None or m.target != "prims.amax.default" or _ref(m.args[0]) != g_name:
        return None
    rank = len(div.outputs[0].shape) if div.outputs[0] else 0
    dims = [d % rank for d in s.args[1]] if rank else []
    if dims != [rank - 1] or [d % rank for d in m.args[1]] != dims:
        return None
    return g_name, dims


def _scores(nodes: dict[str, Node], logits: str) -> str | None:
    """The one product ``g`` is computed from through elementwise work and reshapes (no
    reduction and no other product on the way)."""
    seen: set[str] = set()
    found: list[str] = []
    stack = [logits]
    while stack:
        name = stack.pop()
        if name in seen or name not in nodes:
            continue  # a graph input: a mask or a bias read beside the scores
        seen.add(name)
        node = nodes[name]
        if node.target == "aten.bmm.default":
            found.append(name)
            continue
        if node.target.startswith(_REDUCING) or node.target in ("aten.mm.default", "aten.addmm.default"):
            return None
        stack.extend(_refs(node.args))
    return found[0] if len(found) == 1 else None


def _refs(value: Any) -> list[str]:
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    ref = _ref(value)
    return [ref] if ref else []


class ScoresValue(Value):
    """The first product: a tile inside the attention kernel, stored when read elsewhere."""

    def __init__(self, builder: Any, shape: Sequence[int], dtype: str, a: Value, b: Value,
                 realize: Callable[[], Stored], scale: float = 1.0) -> None:
        self.builder = builder
        self.shape = tuple(shape)
        self.dtype = dtype
        # The product is ``scale * (a @ b)``: 16-bit operands the spec widened to float32 and
        # scaled are multiplied narrow (exact products) and the scale applied to the tile.
        self.a, self.b, self.scale = a, b, scale
        self.cost = 0
        self._realize = realize
        self._stored: Stored | None = None

    def load(self, k: KernelWriter, index: Sequence[Expr], mask: str | None) -> str:
        tile = getattr(k, "scores_tile", None)
        if tile is not None and tile[0] is self and same_index(index, tile[1]):
            return tile[2]
        if getattr(k, "probing", False):
            return k.var(f"tl.full([1], 0, {tl_type('float32')})", "float32")
        if self._stored is None:
            self._stored = self._realize()
        return self._stored.load(k, index, mask)


# Elements of one tile of the interpreter's batched form: several (batch, head) pairs per
# program, since each interpreted program costs a fixed overhead per operation however small
# its tiles (a batch of 512 one-query attentions would be 512 programs).
INTERPRETER_TILE = 1 << 16


def flash_kernel(name: str, scores: ScoresValue, logits: Value, v: Value, out: Buffer, p_dtype: str,
                 zero_empty_rows: bool = False) -> Kernel | None:
    """The streaming kernel, or None when its shape does not fit one (value rows too wide).
    Under the interpreter it runs a batched form of itself: ``BLOCK_Z`` (batch, head) pairs per
    program, every tile three-dimensional."""
    z_n, lq, d = scores.a.shape
    lk = scores.b.shape[2]
    dv = v.shape[2]
    if dv > MAX_HEAD or tuple(logits.shape) != (z_n, lq, lk):
        return None
    head = max(16, pow2(dv))
    k = _flash_writer(name, scores, logits, v, out, p_dtype, zero_empty_rows, batched=False)
    batched = _flash_writer(name + "_i", scores, logits, v, out, p_dtype, zero_empty_rows, batched=True)
    block_m, block_n = tunables.current().attention_block
    gpu = {"BLOCK_M": block_m if head <= 64 else min(block_m, 64), "BLOCK_N": block_n,
           "BLOCK_D": max(16, min(64, pow2(d))), "BLOCK_DV": head}
    cpu = {"BLOCK_M": max(16, min(128, pow2(lq))), "BLOCK_N": max(16, min(256, pow2(lk))),
           "BLOCK_D": max(16, min(128, pow2(d))), "BLOCK_DV": head}
    mul_s, mul_o = dot_type(scores.a.dtype, scores.b.dtype), dot_type(p_dtype, v.dtype)
    # Key and value tiles of every pipeline stage share the block's shared memory with the
    # query tile and the probabilities: fewer stages (then narrower key blocks) where wide
    # heads in float32 would not fit.
    size = {m: 2 if m in ("float16", "bfloat16") else 4 for m in (mul_s, mul_o)}
    while True:
        fixed = gpu["BLOCK_M"] * (gpu["BLOCK_D"] * size[mul_s] + gpu["BLOCK_N"] * size[mul_o])
        per_stage = gpu["BLOCK_N"] * (gpu["BLOCK_D"] * size[mul_s] + head * size[mul_o])
        stages = max(1, min(3, (SMEM_BUDGET - fixed) // per_stage))
        if fixed + stages * per_stage <= SMEM_BUDGET or gpu["BLOCK_N"] <= 16:
            break
        gpu["BLOCK_N"] //= 2
    args = kernel_args(k)
    own = ("tl.max(g, 2)", "tl.sum(p, 2)", "tl.sum(tl.exp(g - m_ref), 2)")  # the batched form's own reductions
    interpreter = batched if batched_form_ok(batched, args, own) else None
    pairs = 1
    if interpreter is not None:
        pairs = max(1, min(pow2(z_n), INTERPRETER_TILE // (cpu["BLOCK_M"] * max(cpu["BLOCK_N"], cpu["BLOCK_D"], head))))
        cpu["BLOCK_Z"] = pairs
    cpu_grid = (math.ceil(lq / cpu["BLOCK_M"]), math.ceil(z_n / pairs))
    return Kernel(k, args, LaunchShape((math.ceil(lq / gpu["BLOCK_M"]), z_n), gpu, 4, stages),
                  LaunchShape(cpu_grid, cpu, 1), [out], interpreter=interpreter)


def _flash_writer(name: str, scores: ScoresValue, logits: Value, v: Value, out: Buffer, p_dtype: str,
                  zero_empty_rows: bool, batched: bool) -> KernelWriter:
    """The kernel's source: 2-d tiles of one (batch, head) pair per program, or (``batched``)
    3-d tiles of ``BLOCK_Z`` pairs."""
    z_n, lq, d = scores.a.shape
    lk = scores.b.shape[2]
    dv = v.shape[2]
    k = KernelWriter(name)
    bm, bn, bd = k.constexpr("BLOCK_M"), k.constexpr("BLOCK_N"), k.constexpr("BLOCK_D")
    bdv = k.constexpr("BLOCK_DV")
    mul_s = dot_type(scores.a.dtype, scores.b.dtype)
    mul_o = dot_type(p_dtype, v.dtype)
    # Axis expanders: a row vector, a column vector and the kept reduction result, in 2-d
    # or with a leading batch axis.
    row, col, kept = ("[None, :, None]", "[None, None, :]", "[:, :, None]") if batched else \
        ("[:, None]", "[None, :]", "[:, None]")
    red = 2 if batched else 1
    k.line("pid_m = tl.program_id(0)")
    k.line("pid_z = tl.program_id(1)")
    z = range_symbol(f"z_{name}", z_n)
    i = range_symbol(f"i_{name}", lq)
    j = range_symbol(f"j_{name}", lk)
    jv = range_symbol(f"jv_{name}", lk)
    da, db = range_symbol(f"da_{name}", d), range_symbol(f"db_{name}", d)
    c = range_symbol(f"c_{name}", dv)
    k.names.update({z: "rz" if batched else "pid_z", i: "rm", j: "rn", jv: "rnv", da: "rda", db: "rdb", c: "rc"})
    zmask, tile = "", f"[{bm}, "
    if batched:
        bz = k.constexpr("BLOCK_Z")
        k.line(f"rz = pid_z * {bz} + tl.arange(0, {bz})[:, None, None]")
        zmask, tile = f"(rz < {z_n}) & ", f"[{bz}, {bm}, "
    k.line(f"rm = pid_m * {bm} + tl.arange(0, {bm}){row}")
    k.line(f"rc = tl.arange(0, {bdv}){col}")
    k.line(f"m_i = tl.full({tile}1], float('-inf'), tl.float32)")
    k.line(f"l_i = tl.zeros({tile}1], tl.float32)")
    k.line(f"acc = tl.zeros({tile}{bdv}], tl.float32)")
    def logit_tile() -> str:
        """The block's logits g (keys past the end at -inf), written inside the key loop."""
        k.line(f"rn = n0 + tl.arange(0, {bn}){col}")
        k.line(f"rnv = n0 + tl.arange(0, {bn}){row}")
        k.line(f"s = tl.zeros({tile}{bn}], tl.float32)")
        with k.block(f"for d0 in range(0, {d}, {bd}):"):
            k.line(f"rda = d0 + tl.arange(0, {bd}){col}")
            k.line(f"rdb = d0 + tl.arange(0, {bd}){row}")
            amask, bmask = f"{zmask}(rm < {lq}) & (rda < {d})", f"{zmask}(rdb < {d}) & (rn < {lk})"
            q = dot_operand(k, scores.a.load(k, [z, i, da], amask), amask, mul_s, accumulator_type(mul_s))
            kt = dot_operand(k, scores.b.load(k, [z, db, j], bmask), bmask, mul_s, accumulator_type(mul_s))
            k.line(f"s += tl.dot({q}, {kt}{dot_precision(mul_s)})")
        if scores.scale != 1.0:
            k.line(f"s = s * {scores.scale!r}")
        k.dtypes["s"] = "float32"
        k.scores_tile = (scores, [z, i, j], rounded(k, "s", scores.dtype))  # type: ignore[attr-defined]
        mask = f"{zmask}(rm < {lq}) & (rn < {lk})"
        g = k.cast(logits.load(k, [z, i, j], mask), "float32")
        k.scores_tile = None  # type: ignore[attr-defined]
        k.line(f"g = tl.where(rn < {lk}, {g}, float('-inf'))")
        return "g"

    def values() -> str:
        vmask = f"{zmask}(rnv < {lk}) & (rc < {dv})"
        return dot_operand(k, v.load(k, [z, jv, c], vmask), vmask, mul_o, accumulator_type(mul_o))

    loop = f"for n0 in range(0, {lk}, {bn}):"
    if p_dtype in ("float16", "bfloat16"):
        # The spec rounds the probabilities to 16 bits before the second product: they are
        # rounded once normalised, as its softmax stores them (rounding the running,
        # unnormalised ones differs by a rounding step, past a 16-bit tolerance). The keys
        # are walked twice: once for each row's max and sum, once for the product.
        with k.block(loop):
            g = logit_tile()
            k.line(f"m_new = tl.maximum(m_i, tl.max({g}, {red}){kept})")
            k.line("m_ref = tl.where(m_new == float('-inf'), 0.0, m_new)")
            k.line(f"l_i = l_i * tl.exp(m_i - m_ref) + tl.sum(tl.exp({g} - m_ref), {red}){kept}")
            k.line("m_i = m_new")
        k.line("m_ref = tl.where(m_i == float('-inf'), 0.0, m_i)")
        with k.block(loop):
            g = logit_tile()
            k.line(f"p = tl.exp({g} - m_ref) / l_i")
            k.line(f"acc += tl.dot({_narrow(k, 'p', p_dtype, mul_o)}, {values()}{dot_precision(mul_o)})")
        # A row with no finite logit: NaN (0/0) as softmax gives it, or zeros where the spec guards it.
        k.line("o = tl.where(l_i > 0, acc, 0.0)" if zero_empty_rows else "o = acc")
    else:
        with k.block(loop):
            g = logit_tile()
            k.line(f"m_new = tl.maximum(m_i, tl.max({g}, {red}){kept})")
            # A row whose logits are all -inf so far keeps a finite reference, as softmax does
            # until a finite logit arrives (an all -inf row ends as 0/0 = NaN, as in PyTorch).
            k.line("m_ref = tl.where(m_new == float('-inf'), 0.0, m_new)")
            k.line("alpha = tl.exp(m_i - m_ref)")
            k.line(f"p = tl.exp({g} - m_ref)")
            k.line(f"l_i = l_i * alpha + tl.sum(p, {red}){kept}")
            k.line(f"acc = acc * alpha + tl.dot({_narrow(k, 'p', p_dtype, mul_o)}, {values()}{dot_precision(mul_o)})")
            k.line("m_i = m_new")
        # A row with no finite logit: NaN as softmax gives it, or zeros where the spec guards it.
        k.line("o = tl.where(l_i > 0, acc / l_i, 0.0)" if zero_empty_rows else "o = acc / l_i")
    zoff = "rz" if batched else "pid_z"
    k.line(f"tl.store({k.pointer(out)} + {zoff} * {lq * dv} + rm * {dv} + rc, o.to({tl_type(out.dtype)}), "
           f"mask={zmask}(rm < {lq}) & (rc < {dv}))")
    return k


def _narrow(k: KernelWriter, var: str, p_dtype: str, mul: str) -> str:
    """The probabilities rounded as the spec stores them before the second product."""
    if p_dtype in ("float16", "bfloat16"):
        narrow = f"{var}.to({tl_type(p_dtype)}).to(tl.float32)"
        return f"{narrow}.to(tl.float16)" if mul == "float16" else narrow
    return var
