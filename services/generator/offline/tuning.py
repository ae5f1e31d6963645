"""Choose the template and tunables of the next offline candidate.

Inputs: the templates that match the spec, the parent's tunables, everything the request
says was already tried (ancestors, siblings, elites), the diagnosis and the seed. Rules:
- first draft / FRESH_START: a template's defaults (FRESH_START rotates to another
  matching template than the parent's when there is one);
- otherwise: a one-knob move from the parent, scored by the diagnosis (bigger tiles when
  launch- or memory-bound, smaller when register/SRAM-limited, more stages when
  latency-bound...), seed-ordered among equals;
- never a tunable set the request shows as tried while an untried one exists.
The options come in that order (``preferences``); the backend renders them and takes the first
kernel the job does not have yet (``backends/distinct.py``).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator

from kevolve.v1 import common_pb2, work_pb2
from services.generator.offline.templates import Template

# (knob, direction) preferences per bottleneck: +1 = larger value, -1 = smaller, a string =
# that value of a non-numeric knob.
BOTTLENECK_MOVES: dict[str, dict[str, int | str]] = {
    # GROUP_M: a product's tiles visited in groups of tile rows, so operand tiles are reread from L2.
    "memory_bound": {"BLOCK": 1, "ROWS": 1, "num_warps": 1, "BLOCK_N": 1, "WHOLE_ROW_MAX": 1, "EVICT": "first",
                     "GROUP_M": 1},
    "launch_bound": {"BLOCK": 1, "ROWS": 1, "BLOCK_M": 1, "BLOCK_N": 1, "BLOCK_D": 1},
    "occupancy_registers": {"BLOCK": -1, "ROWS": -1, "WHOLE_ROW_MAX": -1, "BLOCK_M": -1, "BLOCK_N": -1,
                            "BLOCK_K": -1, "num_stages": -1},
    "occupancy_smem": {"BLOCK_K": -1, "num_stages": -1, "BLOCK_M": -1, "BLOCK_N": -1},
    "sram_overflow": {"BLOCK": -1, "BLOCK_K": -1, "BLOCK_N": -1, "WHOLE_ROW_MAX": -1, "num_stages": -1},
    # ONLINE_MAX=rows: an online softmax's running max per row, one exponential an element
    # instead of two (on an H200: 3-6% faster where the row program has more work, a KL
    # divergence or a cross entropy; 2-10% slower on a plain softmax).
    "compute_bound": {"BLOCK_M": 1, "BLOCK_N": 1, "num_stages": 1, "num_warps": 1, "GROUP_M": 1,
                      "ONLINE_MAX": "rows"},
    "latency_bound": {"num_stages": 1, "num_warps": 1, "ROWS": 1, "ONLINE_MAX": "rows"},
}
BOTTLENECK_MOVES["occupancy"] = BOTTLENECK_MOVES["occupancy_registers"]

# Forms that leave PyTorch's exact order or rounding for speed (a scan accumulated exactly
# instead of in PyTorch's order, an attention rounding its running probabilities), each within
# the comparison's tolerance on some data and not on other: a correct parent slower than its
# baseline tries them first (before the bottleneck's moves), and a parent the comparison
# failed goes back to the exact forms.
FASTER_FORMS: dict[str, int | str] = {"SCAN_ORDER": "exact", "ATTENTION_SOFTMAX": "online"}
EXACT_FORMS: dict[str, int | str] = {"SCAN_ORDER": "pytorch", "ATTENTION_SOFTMAX": "exact"}
# Then, still before any tile move, float32 products summed in K order with FMAs: the
# tensor-core forms sum in another order, which at a long K (6144 on an H200) carried values
# near zero past a float32 tolerance of PyTorch's product, where FMAs in K order did not.
# Slower, so only after the forms the parent itself may have taken for speed.
EXACT_PRODUCTS: dict[str, int | str] = {"FLOAT32_PRODUCT": "ieee"}


def _form_moves(parent: common_pb2.NodeSummary) -> list[tuple[dict[str, int | str], float]]:
    """The form moves a parent calls for, each with its weight (tile moves weigh 1)."""
    if parent.verdict == common_pb2.PASSED and 0 < parent.fitness < 1.0:
        return [(FASTER_FORMS, 2.0)]
    if parent.verdict == common_pb2.INCORRECT:
        return [(EXACT_FORMS, 2.0), (EXACT_PRODUCTS, 1.5)]
    return []


# The codegen of the general lowering's search space (``backends/general.search_space``).
GENERAL_CODEGEN = "general"


def _wants_another_writer(parent: common_pb2.NodeSummary, category: str) -> bool:
    """Whether the parent's kernel is broken (any verdict but PASSED, or a diagnosis of a
    compile error or wrong outputs) or correct but slower than its baseline."""
    if category in ("compile_error", "incorrect"):
        return True
    if parent.verdict == common_pb2.PASSED:
        return 0 < parent.fitness < 1.0
    return parent.verdict != common_pb2.VERDICT_UNSPECIFIED


def _key(tunables: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in tunables.items() if k != "model"))


def known_nodes(request: work_pb2.GenerateRequest) -> list[common_pb2.NodeSummary]:
    """The job's candidates the request tells of: parent, ancestors, siblings, elites."""
    expand = request.expand
    return [expand.parent, *expand.ancestors, *expand.siblings, *expand.elites]


def tried_sets(request: work_pb2.GenerateRequest) -> set[tuple[tuple[str, str], ...]]:
    return {_key(dict(n.tunables)) for n in known_nodes(request) if n.tunables}


def _num(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _score(knob: str, old: str, new: str, prefs: dict[str, int | str]) -> float:
    direction = prefs.get(knob, 0)
    if isinstance(direction, str):
        return 1.0 if new == direction else (-1.0 if old == direction else 0.0)
    a, b = _num(old), _num(new)
    if direction == 0 or a is None or b is None:
        return 0.0
    return 1.0 if (b - a) * direction > 0 else -1.0


def preferences(templates: list[Template], request: work_pb2.GenerateRequest
                ) -> Iterator[tuple[Template, dict[str, str]]]:
    """Every distinct (template, tunables) pair, most preferred first; the last one may repeat
    a tried set (the whole space was tried). Two sets can still render the same code (a knob
    that does not matter at this shape): the backend compares the code itself."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    for t, tun in _preferences(templates, request):
        tun = _permitted(tun, request.expand.allow_tf32)
        if tun is None:
            continue
        key = _key({"template": t.name, **tun})
        if key not in seen:
            seen.add(key)
            yield t, tun


def _permitted(tunables: dict[str, str], allow_tf32: bool) -> dict[str, str] | None:
    """A template's float32 product precision under the job's precision policy: TF32 only
    where the job allows it, and then always (the other precisions only buy the float32
    accuracy the job waived); None for a set that asks for TF32 in a job that does not."""
    precision = tunables.get("PRECISION")
    if precision is None:
        return tunables
    if allow_tf32:
        return {**tunables, "PRECISION": "tf32"}
    return None if precision == "tf32" else tunables


def _preferences(templates: list[Template], request: work_pb2.GenerateRequest
                 ) -> Iterator[tuple[Template, dict[str, str]]]:
    """Candidate (template, tunables) pairs, most preferred first."""
    rng = random.Random(request.expand.seed)
    tried = tried_sets(request)
    parent = dict(request.expand.parent.tunables)
    by_name = {t.name: t for t in templates}
    diagnosis = request.diagnosis
    fresh = request.expand.context_mode == common_pb2.FRESH_START
    parent_template = by_name.get(parent.get("template", ""))

    def labelled(t: Template, tun: dict[str, str]) -> dict[str, str]:
        return {"template": t.name, **tun}

    def untried(t: Template, tun: dict[str, str]) -> bool:
        return _key(labelled(t, tun)) not in tried

    if parent_template is None or fresh:
        order = list(templates)
        if fresh and parent_template is not None and len(order) > 1:
            order = [t for t in order if t is not parent_template] + [parent_template]
        for t in order:
            if untried(t, t.defaults()):
                yield t, t.defaults()
        base_t = order[0]
        base = base_t.defaults()
    else:
        base_t = parent_template
        base = {k: parent.get(k, v[0]) for k, v in base_t.tunables.items()}
        # A broken parent, or a correct one slower than its baseline: another way of writing
        # the whole kernel is the biggest change, before any tile move. The general lowering
        # (codegen "general": it writes any spec) first, as it differs most from a family's
        # template; then the other matching templates.
        if _wants_another_writer(request.expand.parent, diagnosis.category):
            for t in sorted(templates, key=lambda x: x.codegen != GENERAL_CODEGEN):
                if t is not base_t and untried(t, t.defaults()):
                    yield t, t.defaults()

    prefs = BOTTLENECK_MOVES.get(diagnosis.bottleneck, {})
    forms = _form_moves(request.expand.parent)
    moves: list[tuple[float, float, dict[str, str]]] = []
    for knob, values in base_t.tunables.items():
        for value in values:
            if value == base.get(knob):
                continue
            tun = {**base, knob: value}
            if untried(base_t, tun):
                # A form move outranks the bottleneck's: it changes what the kernel computes per
                # element, where a tile or warp move only reshapes the same work.
                score = _score(knob, base[knob], value, prefs) + sum(
                    weight * _score(knob, base[knob], value, moves_) for moves_, weight in forms)
                moves.append((score, rng.random(), tun))
    moves.sort(key=lambda m: (-m[0], m[1]))
    for _, _, tun in moves:
        yield base_t, tun
    # Every one-knob neighbour was tried: any untried point of any matching template.
    for t in [base_t, *[x for x in templates if x is not base_t]]:
        for combo in _points(t.tunables, rng):
            tun = dict(zip(t.tunables, combo, strict=True))
            if untried(t, tun):
                yield t, tun
    yield base_t, base  # the whole space was tried; repeating is all that is left


# A space up to this many points is walked whole, in a seeded random order; a larger one (the
# general lowering's: over a billion points) is sampled this many times instead of listed.
WHOLE_SPACE_MAX = 4096


def _points(tunables: dict[str, list[str]], rng: random.Random) -> Iterator[tuple[str, ...]]:
    """Points of a tunable space in a seeded random order, without listing a large space."""
    size = math.prod(len(values) for values in tunables.values())
    if size <= WHOLE_SPACE_MAX:
        space = list(itertools.product(*tunables.values()))
        rng.shuffle(space)
        yield from space
        return
    for _ in range(WHOLE_SPACE_MAX):
        yield tuple(rng.choice(values) for values in tunables.values())
