"""Greedy selection: always refine the best correct kernel (KernelEvolve's default policy).

Before anything passes, the most recent failure is expanded so the generator can fix the
error it just saw. Greedy gets stuck on a local optimum easily, so after ``fresh_after``
consecutive children of the same parent that did not beat it, one expansion starts afresh
from the spec (FRESH_START), which is how KernelEvolve's memory modes escape a plateau.
"""

from __future__ import annotations

import random

from .base import GraphNode, SearchState, Selection
from .common import (
    FRESH_START,
    PARENT_TRAJECTORY,
    ROOT,
    SIBLING_COMPARE,
    cfg,
    done_nodes,
    failing_chain,
    has_children,
)

DEFAULT_FRESH_AFTER = 3


def finished_children(state: SearchState, parent: GraphNode) -> int:
    """How many children of ``parent`` have their final verdict.

    For the best node every such child failed to beat it (one that did would be the best
    now), so this counts non-improving expansions. Derived from the graph rather than
    counted in ``observe``, so a redelivered verdict or a controller restart cannot
    double-count.
    """
    return sum(1 for n in state.children(parent.node_id) if n.done)


class GreedyPolicy:
    name = "greedy"

    def select(self, state: SearchState, rng: random.Random) -> Selection:
        fresh_after = int(cfg(state.config, "fresh_after", DEFAULT_FRESH_AFTER))
        best = state.best()
        if best is not None:
            spent: dict[str, int] = state.policy_state.setdefault("fresh_at", {})
            judged = finished_children(state, best)
            if judged - spent.get(best.node_id, 0) >= fresh_after:
                # Remember how many children were already judged, so the next fresh start
                # needs K new non-improving children rather than firing on every call.
                spent[best.node_id] = judged
                return Selection(ROOT, FRESH_START)
            mode = SIBLING_COMPARE if has_children(state, best.node_id) else PARENT_TRAJECTORY
            return Selection(best.node_id, mode)
        finished = done_nodes(state)
        if not finished:
            # Nothing judged yet (first call, or all expansions still in flight): another root.
            return Selection(ROOT, PARENT_TRAJECTORY)
        latest = finished[-1]
        if failing_chain(state, latest.node_id) >= fresh_after:
            # A chain of fixes that keeps failing: abandon it and start over from the spec.
            return Selection(ROOT, FRESH_START)
        return Selection(latest.node_id, PARENT_TRAJECTORY)

    def observe(self, state: SearchState, node: GraphNode) -> None:
        # Greedy's only memory (fresh_at) is written in select; everything else is the graph.
        return None
