"""Uniform random selection: the baseline the other policies are benchmarked against."""

from __future__ import annotations

import random

from .base import GraphNode, SearchState, Selection
from .common import PARENT_TRAJECTORY, ROOT, SIBLING_COMPARE, TRAJECTORY_AND_SIBLINGS, done_nodes

_NODE_MODES = (PARENT_TRAJECTORY, SIBLING_COMPARE, TRAJECTORY_AND_SIBLINGS)


class RandomPolicy:
    name = "random"

    def select(self, state: SearchState, rng: random.Random) -> Selection:
        correct = sorted((n for n in state.nodes.values() if n.correct), key=lambda n: n.seq)
        # Before anything passes, any judged node (to be fixed) or the spec is as good as another.
        pool: list[str] = [n.node_id for n in correct] or [ROOT] + [n.node_id for n in done_nodes(state)]
        choice = rng.choice(pool)
        if choice == ROOT:
            return Selection(ROOT, PARENT_TRAJECTORY)
        return Selection(choice, rng.choice(_NODE_MODES))

    def observe(self, state: SearchState, node: GraphNode) -> None:
        return None
