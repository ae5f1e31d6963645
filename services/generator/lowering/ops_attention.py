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
from services.generator.lowering.tunables import Tunables
from services.generator.lowering.attention_masks import KeyBound
from services.generator.lowering.indexing import Expr, range_symbol
from services.generator.lowering.ir import Buffer, KernelWriter, Stored, Value
from services.generator.lowering.kernels import (Kernel, LaunchShape, batched_form_ok, kernel_args, pow2, rounded,
                                                 tl_type)
from services.generator.lowering.ops_heavy import (SMEM_BUDGET, accumulator_type, as_bf16_operand, dot_operand,
                                                  dot_precision, dot_type)
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


_VIEWS = {"prims.collapse_view.default", "prims.split_dim.default", "prims.reshape.default",
          "prims.view_of.default", "prims.transpose.default", "aten.view.default", "aten._unsafe_view.default"}


def read_only_narrowed(nodes: dict[str, Node], readers: dict[str, list[str]], outputs: set[str], name: str,
                       dtype: str) -> bool:
    """Whether every use of ``name`` converts it to ``dtype`` (after views): it may then be
    computed in ``dtype`` outright, as every reader rounds it there anyway."""
    if name in outputs or not readers.get(name):
        return False
    for reader in readers[name]:
        node = nodes[reader]
        meta = node.outputs[0] if len(node.outputs) == 1 else None
        if node.target == "prims.convert_element_type.default" and meta is not None and meta.dtype == dtype:
            continue
        if node.target not in _VIEWS or not read_only_narrowed(nodes, readers, outputs, reader, dtype):
            return False
    return True


def rows_and_keys_kept(nodes: dict[str, Node], match: Match, lq: int, lk: int) -> bool:
    """Whether the logits' last two dims are the attention's query and key dims all the way to
    the second product (the reshapes between only fold the leading batch and head dims): the
    logits' mask then bounds the kernel's own rows and keys."""
    for name in [match.logits, *match.chain]:
        node = nodes.get(name)
        meta = node.outputs[0] if node is not None and len(node.outputs) == 1 else None
        if meta is None or len(meta.shape) < 2 or tuple(meta.shape[-2:]) != (lq, lk):
            return False
    return True


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


@dataclass(frozen=True)
class Flash:
    """How the streaming kernel computes one attention, beyond its operands."""
    p_dtype: str                    # the probabilities' type in the spec
    zero_empty_rows: bool = False   # a row with no finite logit gives zeros, not NaN
    bounds: tuple[KeyBound, ...] = ()  # the keys each query may see (attention_masks.key_bounds)
    # The second product multiplies the probabilities in this 16-bit type (the values' own, the
    # values being 16-bit inputs the spec widened) and scales the sum by ``v_scale``; None:
    # in ``dot_type(p_dtype, v.dtype)``.
    p_mul: str | None = None
    v_scale: float = 1.0


def _whole_head(d: int) -> bool:
    """Whether the first product multiplies the whole head (up to 128 wide) in one step: the
    query tile is then loaded (and computed) once per program, before the key loop, instead
    of once per key block."""
    return pow2(d) <= 128


def flash_kernel(name: str, scores: ScoresValue, logits: Value, v: Value, out: Buffer, how: Flash) -> Kernel | None:
    """The streaming kernel, or None when its shape does not fit one (value rows too wide).
    Under the interpreter it runs a batched form of itself: ``BLOCK_Z`` (batch, head) pairs per
    program, every tile three-dimensional."""
    z_n, lq, d = scores.a.shape
    lk = scores.b.shape[2]
    dv = v.shape[2]
    if dv > MAX_HEAD or tuple(logits.shape) != (z_n, lq, lk):
        return None
    head = max(16, pow2(dv))
    k = _flash_writer(name, scores, logits, v, out, how, batched=False)
    batched = _flash_writer(name + "_i", scores, logits, v, out, how, batched=True)
    t = tunables.current()
    block_m, block_n = t.attention_block
    mul_s, mul_o = dot_type(scores.a.dtype, scores.b.dtype), how.p_mul or dot_type(how.p_dtype, v.dtype)
    whole = _whole_head(d)
    # Fewer queries than a block (a decode step's one) take the smallest block a 16-bit product
    # has; float32 keeps blocks of 64 rows, the only size timed for it.
    least = 16 if mul_s in ("float16", "bfloat16") else 64
    gpu = {"BLOCK_M": min(block_m, max(least, pow2(lq))), "BLOCK_N": block_n,
           "BLOCK_D": max(16, pow2(d)) if whole else 64, "BLOCK_DV": head}
    cpu = {"BLOCK_M": max(16, min(128, pow2(lq))), "BLOCK_N": max(16, min(256, pow2(lk))),
           "BLOCK_D": max(16, pow2(d)) if whole else 128, "BLOCK_DV": head}
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
    # A block of 128 rows of a wide head keeps a [128, head] float32 accumulator: 8 warps hold
    # it without spilling registers.
    warps = t.num_warps if t.num_warps != Tunables.num_warps else 8 if block_m * head >= 128 * 128 else 4
    return Kernel(k, args, LaunchShape((math.ceil(lq / gpu["BLOCK_M"]), z_n), gpu, warps, stages),
                  LaunchShape(cpu_grid, cpu, 1), [out], interpreter=interpreter)


def _flash_writer(name: str, scores: ScoresValue, logits: Value, v: Value, out: Buffer, how: Flash,
                  batched: bool) -> KernelWriter:
    """The kernel's source: 2-d tiles of one (batch, head) pair per program, or (``batched``)
    3-d tiles of ``BLOCK_Z`` pairs."""
    z_n, lq, d = scores.a.shape
    lk = scores.b.shape[2]
    dv = v.shape[2]
    k = KernelWriter(name)
    # Every value it rounds is a score-sized tile: the packed bfloat16 rounding serves them,
    # where two conversions an element would set the speed of the score loop.
    k.packed_rounding = True
    bm, bn, bd = k.constexpr("BLOCK_M"), k.constexpr("BLOCK_N"), k.constexpr("BLOCK_D")
    bdv = k.constexpr("BLOCK_DV")
    mul_s = dot_type(scores.a.dtype, scores.b.dtype)
    mul_o = how.p_mul or dot_type(how.p_dtype, v.dtype)
    whole = _whole_head(d)
    # Axis expanders: a row vector, a column vector and the kept reduction result, in 2-d
    # or with a leading batch axis.
    row, col, kept = ("[None, :, None]", "[None, None, :]", "[:, :, None]") if batched else \
        ("[:, None]", "[None, :]", "[:, None]")
    red = 2 if batched else 1
    if any(b.upper and b.slope > 0 for b in how.bounds):
        # Later query blocks see more keys (a causal mask): they start first, so the last
        # programs to finish are the short ones.
        k.line("pid_m = tl.num_programs(0) - 1 - tl.program_id(0)")
    else:
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
    loop = f"for n0 in range({_key_range(k, how.bounds, lq, lk, bm, bn)}, {bn}):"
    query = ""
    if whole:
        # The whole head in one product: the query tile is ready before the key loop.
        k.line(f"rda = tl.arange(0, {bd}){col}")
        k.line(f"rdb = tl.arange(0, {bd}){row}")
        amask = f"{zmask}(rm < {lq}) & (rda < {d})"
        query = dot_operand(k, scores.a.load(k, [z, i, da], amask), amask, mul_s, accumulator_type(mul_s))

    def product(kt: str) -> str:
        return f"tl.dot({query}, {kt}{dot_precision(mul_s)})"

    def logit_tile() -> str:
        """The block's logits g (keys past the end at -inf), written inside the key loop."""
        k.line(f"rn = n0 + tl.arange(0, {bn}){col}")
        k.line(f"rnv = n0 + tl.arange(0, {bn}){row}")
        if whole:
            bmask = f"{zmask}(rdb < {d}) & (rn < {lk})"
            kt = dot_operand(k, scores.b.load(k, [z, db, j], bmask), bmask, mul_s, accumulator_type(mul_s))
            k.line(f"s = {product(kt)}")
        else:
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

    p_dtype = how.p_dtype
    if p_dtype in ("float16", "bfloat16") and tunables.current().attention_softmax == "exact":
        # The spec rounds the probabilities to 16 bits before the second product: they are
        # rounded once normalised, as its softmax stores them (rounding the running,
        # unnormalised ones differs by a rounding step, past a 16-bit tolerance). The keys
        # are walked twice: once for each row's max and sum, once for the product. The
        # search's ATTENTION_SOFTMAX=online takes the one-walk form below instead.
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
        k.line("o = tl.where(l_i > 0, acc, 0.0)" if how.zero_empty_rows else "o = acc")
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
        k.line("o = tl.where(l_i > 0, acc / l_i, 0.0)" if how.zero_empty_rows else "o = acc / l_i")
    if how.v_scale != 1.0:
        k.line(f"o = o * {how.v_scale!r}")
    zoff = "rz" if batched else "pid_z"
    k.line(f"tl.store({k.pointer(out)} + {zoff} * {lq * dv} + rm * {dv} + rc, o.to({tl_type(out.dtype)}), "
           f"mask={zmask}(rm < {lq}) & (rc < {dv}))")
    return k


def _key_range(k: KernelWriter, bounds: Sequence[KeyBound], lq: int, lk: int, bm: str, bn: str) -> str:
    """The ``range`` arguments of the key loop: every key, or (under ``bounds``) the key blocks
    some query of this program's block may see. A bound is linear in the query, so its extreme
    over the block is at one of the block's two end rows."""
    if not bounds:
        return f"0, {lk}"
    k.line(f"i_lo = pid_m * {bm}")
    k.line(f"i_hi = tl.minimum(i_lo + {bm}, {lq}) - 1")
    k.line("n_lo = i_lo * 0")
    k.line(f"n_hi = n_lo + {lk}")
    for b in bounds:
        ends = f"{b.slope} * i_lo + {b.offset}", f"{b.slope} * i_hi + {b.offset}"
        if b.upper:
            k.line(f"n_hi = tl.minimum(n_hi, tl.maximum({ends[0]}, {ends[1]}) + 1)")
        else:
            k.line(f"n_lo = tl.maximum(n_lo, tl.minimum({ends[0]}, {ends[1]}))")
    # Whole key blocks from the first one holding a visible key (n_lo >= 0: plain division).
    k.line(f"n_lo = (n_lo // {bn}) * {bn}")
    return "n_lo, n_hi"


def _narrow(k: KernelWriter, var: str, p_dtype: str, mul: str) -> str:
    """The probabilities as the second product multiplies them: rounded as the spec stores them
    before it, or (float32 probabilities against 16-bit values) rounded to the values' type."""
    if p_dtype in ("float16", "bfloat16") and mul != p_dtype:
        var = rounded(k, var, p_dtype)
    if mul == "float16":
        return f"{var}.to(tl.float16)"
    if mul == "bfloat16":
        # Rounded once, into the product's own type. The interpreter multiplies bfloat16
        # through float32 (see ops_heavy.BF16_DOT): its operand is the rounded value widened.
        return as_bf16_operand(k, f"{var}.to(tl.bfloat16)", rounded(k, var, "bfloat16"))
    return var
