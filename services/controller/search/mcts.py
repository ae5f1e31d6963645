"""Monte Carlo tree search with UCT, as KernelEvolve uses it to balance refining the best
kernel against exploring other branches.

The tree hangs off a virtual root (the spec); its children are the root candidates.
Statistics live in ``policy_state`` (JSON): per node the number of finished nodes in its
subtree (visits), the sum and the maximum of their fitness; ``observe`` backs a finished
node up along its ancestors. A subtree's value is its best fitness by default
(``mcts_backup="max"``: only the best kernel is kept, so an average would punish a branch
for its failed experiments; bench/results/search_efficiency.md measured max ahead of mean)
or the mean (``"mean"``, textbook UCT). Values are normalised by the best fitness *at
selection time*, so Q stays in [0, 1] whatever the fitness scale.

Selection descends by UCT (``uct_c``, default 1.4). A node is expanded (a child generated
from it) rather than descended into while it has fewer children than
``1 + floor(mcts_widen * sqrt(visits))`` (progressive widening: an LLM operator can produce
unboundedly many children). Expansions already in
flight count as virtual visits with value 0 along their path, so parallel selections in
the same instant spread over different branches instead of all piling onto one.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .base import GraphNode, SearchState, Selection
from .common import FRESH_START, PARENT_TRAJECTORY, ROOT, TRAJECTORY_AND_SIBLINGS, ancestors, cfg

DEFAULT_UCT_C = 1.4
DEFAULT_BACKUP = "max"
DEFAULT_WIDEN = 1.0


def _stats(state: SearchState) -> dict[str, Any]:
    ps = state.policy_state
    ps.setdefault("visits", {})
    ps.setdefault("value", {})
    ps.setdefault("best", {})
    ps.setdefault("observed", [])
    return ps


def pending_counts(state: SearchState) -> dict[str, int]:
    """Virtual visits per node id (ROOT included): in-flight work anywhere in its subtree.

    In flight = an expansion issued but no candidate yet (counted at the expanded node), or a
    candidate in the graph still being evaluated (counted at its parent).
    """
    counts: dict[str, int] = {}
    origins = list(state.pending_parents) + [n.parent_id for n in state.nodes.values() if not n.done]
    for origin in origins:
        counts[ROOT] = counts.get(ROOT, 0) + 1
        if origin and origin in state.nodes:
            for node_id in [origin] + [a.node_id for a in ancestors(state, origin)]:
                counts[node_id] = counts.get(node_id, 0) + 1
    return counts


class MctsPolicy:
    name = "mcts"

    def select(self, state: SearchState, rng: random.Random) -> Selection:
        stats = _stats(state)
        c = cfg(state.config, "uct_c", DEFAULT_UCT_C)
        use_max = state.config.get("mcts_backup", DEFAULT_BACKUP) == "max"
        widen = float(state.config.get("mcts_widen", DEFAULT_WIDEN))
        pending = pending_counts(state)
        best = state.best()
        scale = best.fitness if best is not None else 0.0
        current = ROOT
        while True:
            kids = state.children(current) if current else sorted(
                (n for n in state.nodes.values() if not n.parent_id), key=lambda n: n.seq)
            done_kids = [k for k in kids if k.done]
            issued = len(kids) + state.pending_parents.count(current)
            n_parent = (stats.get("root_visits", 0) if current == ROOT else stats["visits"].get(current, 0))
            n_parent += pending.get(current, 0)
            if not done_kids or issued < 1 + int(widen * math.sqrt(n_parent)):
                return Selection(current, self._mode(current, issued))
            total = max(1, n_parent)

            def uct(node: GraphNode) -> float:
                n = stats["visits"].get(node.node_id, 0)
                virtual = n + pending.get(node.node_id, 0)
                if virtual == 0:
                    return math.inf
                if use_max:
                    # Only the best kernel matters, so a subtree is as good as its best node;
                    # in-flight work discounts it like a visit that found nothing.
                    value = stats["best"].get(node.node_id, 0.0) * n / virtual
                else:
                    value = stats["value"].get(node.node_id, 0.0) / virtual  # in-flight count as value 0
                q = value / scale if scale > 0 else 0.0
                return q + c * math.sqrt(math.log(total) / virtual)

            scores = [uct(k) for k in done_kids]
            top = max(scores)
            tied = [k for k, s in zip(done_kids, scores) if s == top]
            current = tied[0].node_id if len(tied) == 1 else rng.choice(tied).node_id

    @staticmethod
    def _mode(node_id: str, issued: int) -> int:
        if node_id == ROOT:
            # Another root beside existing ones is an independent attempt from the spec.
            return FRESH_START if issued else PARENT_TRAJECTORY
        return TRAJECTORY_AND_SIBLINGS if issued else PARENT_TRAJECTORY

    def observe(self, state: SearchState, node: GraphNode) -> None:
        stats = _stats(state)
        if node.node_id in stats["observed"]:
            return  # a redelivered verdict must not back up twice
        stats["observed"].append(node.node_id)
        value = node.fitness if node.correct else 0.0
        path = [node.node_id] + [a.node_id for a in ancestors(state, node.node_id)]
        for node_id in path:
            stats["visits"][node_id] = stats["visits"].get(node_id, 0) + 1
            stats["value"][node_id] = stats["value"].get(node_id, 0.0) + value
            stats["best"][node_id] = max(stats["best"].get(node_id, 0.0), value)
        stats["root_visits"] = stats.get("root_visits", 0) + 1
        stats["root_value"] = stats.get("root_value", 0.0) + value
