"""An offline stand-in for generator + evaluator, to measure and test the policies.

``Landscape`` is a synthetic fitness function over an offline-generator-like tunable space
(template x BLOCK_SIZE x num_warps x num_stages): a few Gaussian peaks of different heights
placed at random per seed (so greedy can get trapped on a local one), plus configurations
that fail (too many threads per block "fails to compile", a hash-chosen ~10% "incorrect").
``Operator`` plays the LLM: it perturbs the parent's tunables, steps toward the best
sibling when the prompt shows siblings, and draws fresh tunables for a spec-only prompt.
``run_search`` is the engine's loop in miniature (issue up to ``parallelism`` expansions,
complete them in random order, ``observe`` each), so parallel behaviour is exercised too.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Any

from kevolve.v1 import common_pb2

from .base import GraphNode, Policy, SearchState, rng_for
from .common import FRESH_START, ROOT, SIBLING_COMPARE, TRAJECTORY_AND_SIBLINGS

AXES: dict[str, list[str]] = {
    "template": ["rowwise", "tiled", "split_k"],
    "BLOCK_SIZE": ["32", "64", "128", "256", "512", "1024", "2048", "4096"],
    "num_warps": ["1", "2", "4", "8", "16"],
    "num_stages": ["1", "2", "3", "4"],
}


def _index(tunables: dict[str, str]) -> tuple[int, ...]:
    return tuple(AXES[a].index(tunables[a]) for a in AXES)


def _tunables(index: tuple[int, ...]) -> dict[str, str]:
    return {a: AXES[a][i] for a, i in zip(AXES, index)}


@dataclass
class Landscape:
    seed: int
    peaks: list[tuple[tuple[int, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = random.Random(f"landscape:{self.seed}")
        heights = [4.0, 2.6, 2.2, 1.8]  # one global optimum, three decoys
        while len(self.peaks) < len(heights):
            centre = tuple(rng.randrange(len(v)) for v in AXES.values())
            self.peaks.append((centre, heights[len(self.peaks)]))
            if self.evaluate(_tunables(centre))[0] != common_pb2.PASSED:
                self.peaks.pop()  # a peak on a failing configuration would be unreachable

    def evaluate(self, tunables: dict[str, str]) -> tuple[int, float]:
        """(verdict, fitness) of a configuration; deterministic."""
        idx = _index(tunables)
        block, warps = int(tunables["BLOCK_SIZE"]), int(tunables["num_warps"])
        if block * warps > 16384:
            return common_pb2.COMPILE_ERROR, 0.0
        digest = hashlib.sha256(f"{self.seed}:{idx}".encode()).digest()
        if digest[0] < 26:  # ~10% of configurations compute the wrong answer
            return common_pb2.INCORRECT, 0.0
        best = 0.3
        for centre, height in self.peaks:
            d2 = sum((a - b) ** 2 for a, b in zip(idx, centre))
            best = max(best, height * math.exp(-d2 / 5.0))
        return common_pb2.PASSED, round(best, 4)

    def optimum(self) -> float:
        """The best fitness any configuration reaches (exhaustive: the space is small)."""
        best = 0.0
        for t in _all():
            verdict, fit = self.evaluate(t)
            best = max(best, fit if verdict == common_pb2.PASSED else 0.0)
        return best


def _all() -> list[dict[str, str]]:
    combos: list[tuple[int, ...]] = [()]
    for values in AXES.values():
        combos = [c + (i,) for c in combos for i in range(len(values))]
    return [_tunables(c) for c in combos]


class Operator:
    """The LLM stand-in: how a child's tunables follow from parent, siblings and mode."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def child(self, state: SearchState, parent_id: str, mode: int, rng: random.Random) -> dict[str, str]:
        # Like the offline generator, avoid re-proposing a configuration the prompt shows as tried.
        tried = [n.tunables for n in state.nodes.values()
                 if n.parent_id == parent_id or n.node_id == parent_id] if parent_id else []
        for _ in range(8):
            out = self._propose(state, parent_id, mode, rng)
            if out not in tried:
                break
        return out

    def _propose(self, state: SearchState, parent_id: str, mode: int, rng: random.Random) -> dict[str, str]:
        if parent_id == ROOT or mode == FRESH_START or parent_id not in state.nodes:
            return {a: rng.choice(v) for a, v in AXES.items()}
        idx = list(_index(state.nodes[parent_id].tunables))
        if mode in (SIBLING_COMPARE, TRAJECTORY_AND_SIBLINGS):
            sibs = [n for n in state.children(parent_id) if n.correct]
            if sibs and rng.random() < 0.5:  # borrow one setting from the best sibling
                best = max(sibs, key=lambda n: n.fitness)
                axis = rng.randrange(len(idx))
                idx[axis] = _index(best.tunables)[axis]
        for _ in range(rng.choice((1, 1, 2))):  # small local edit
            axis = rng.randrange(len(idx))
            size = len(list(AXES.values())[axis])
            idx[axis] = min(size - 1, max(0, idx[axis] + rng.choice((-1, 1))))
        return _tunables(tuple(idx))


@dataclass
class Trace:
    fitness: list[float]            # per evaluation, in completion order (0 for failures)
    state: SearchState


def run_search(policy: Policy, seed: int, budget: int, parallelism: int = 1,
               config: dict[str, Any] | None = None, landscape: Landscape | None = None,
               state: SearchState | None = None, stop_after: int | None = None) -> Trace:
    """Simulate a job; ``stop_after`` evaluations returns early (to test resuming ``state``)."""
    land = landscape or Landscape(seed)
    op = Operator(seed)
    st = state or SearchState(job_id=f"sim{seed}", seed=seed, nodes={}, pending_parents=[], decisions=0,
                              policy_state={}, config=dict(config or {}))
    inflight: list[tuple[str, int]] = list(st.policy_state.get("_sim_inflight", []))
    fitness = [n.fitness for n in sorted(st.nodes.values(), key=lambda n: n.seq)]
    while True:
        while len(inflight) < parallelism and len(st.nodes) + len(inflight) < budget:
            sel = policy.select(st, rng_for(seed, st.decisions))
            st.decisions += 1
            inflight.append((sel.parent_id, sel.context_mode))
            st.pending_parents.append(sel.parent_id)
        if not inflight or (stop_after is not None and len(fitness) >= stop_after):
            break
        pick = rng_for(seed * 7919 + 1, len(st.nodes)).randrange(len(inflight))
        parent_id, mode = inflight.pop(pick)
        st.pending_parents.remove(parent_id)
        tunables = op.child(st, parent_id, mode, rng_for(seed * 104729 + 3, len(st.nodes)))
        verdict, fit = land.evaluate(tunables)
        gen = st.nodes[parent_id].generation + 1 if parent_id in st.nodes else 0
        node = GraphNode(node_id=f"n{len(st.nodes)}", parent_id=parent_id, generation=gen, seq=len(st.nodes),
                         done=True, verdict=verdict, fitness=fit, tunables=tunables, context_mode=mode)
        st.nodes[node.node_id] = node
        policy.observe(st, node)
        fitness.append(fit)
    # Kept in policy_state only so a test can serialise a paused simulation; engines don't need it.
    st.policy_state["_sim_inflight"] = [list(x) for x in inflight]
    return Trace(fitness=fitness, state=st)


def evals_to_reach(fitness: list[float], target: float) -> int | None:
    """1-based number of evaluations until one reached ``target``; None if never."""
    for i, f in enumerate(fitness, start=1):
        if f >= target:
            return i
    return None
