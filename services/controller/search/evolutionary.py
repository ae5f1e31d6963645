"""Island-model evolutionary search (openevolve-style, as in KernelEvolve's evolutionary
policy): several sub-populations evolve apart, keeping diversity, and periodically pass
their best kernel to the next island in a ring.

State in ``policy_state`` (JSON): each finished node's home island, each island's members
(home nodes plus migrants), the evaluation counter that times migrations, and FIFO queues
remembering which island asked for an expansion so the child joins that island even when
its parent is a migrant living on two.
"""

from __future__ import annotations

import random
from typing import Any

from .base import GraphNode, SearchState, Selection
from .common import FRESH_START, PARENT_TRAJECTORY, ROOT, TRAJECTORY_AND_SIBLINGS, cfg, failing_chain

DEFAULT_ISLANDS = 4
DEFAULT_MIGRATION_INTERVAL = 10
TOURNAMENT_SIZE = 3
DEFAULT_FRESH_PROB = 0.1
FIX_CHAIN_LIMIT = 3  # consecutive failures on an island before it starts over from the spec


def _state(state: SearchState) -> dict[str, Any]:
    k = int(cfg(state.config, "islands", DEFAULT_ISLANDS))
    ps = state.policy_state
    ps.setdefault("island_of", {})
    ps.setdefault("members", [[] for _ in range(k)])
    ps.setdefault("requests", {})  # parent id ("" = root) -> islands that asked, oldest first
    ps.setdefault("next_root", 0)
    ps.setdefault("evals", 0)
    ps.setdefault("migrations", [])
    return ps


class EvolutionaryPolicy:
    name = "evolutionary"

    def select(self, state: SearchState, rng: random.Random) -> Selection:
        ps = _state(state)
        k = len(ps["members"])
        island = state.decisions % k  # islands take turns, so each evolves at the same pace
        members = [state.nodes[m] for m in ps["members"][island] if m in state.nodes]
        correct = [n for n in members if n.correct]
        fresh_prob = cfg(state.config, "fresh_prob", DEFAULT_FRESH_PROB)
        if correct:
            if rng.random() < fresh_prob:
                return self._ask(ps, island, ROOT, FRESH_START)
            parent = self._pick(correct, state.config, rng)
            return self._ask(ps, island, parent.node_id, TRAJECTORY_AND_SIBLINGS)
        if members:
            latest = max(members, key=lambda n: n.seq)
            if failing_chain(state, latest.node_id) >= FIX_CHAIN_LIMIT:
                return self._ask(ps, island, ROOT, FRESH_START)
            return self._ask(ps, island, latest.node_id, PARENT_TRAJECTORY)
        return self._ask(ps, island, ROOT, PARENT_TRAJECTORY)

    @staticmethod
    def _ask(ps: dict[str, Any], island: int, parent_id: str, mode: int) -> Selection:
        ps["requests"].setdefault(parent_id, []).append(island)
        return Selection(parent_id, mode)

    @staticmethod
    def _pick(pool: list[GraphNode], config: dict[str, Any], rng: random.Random) -> GraphNode:
        pool = sorted(pool, key=lambda n: n.seq)
        if config.get("parent_selection", "tournament") == "proportional":
            return rng.choices(pool, weights=[n.fitness for n in pool], k=1)[0]
        entrants = rng.sample(pool, min(TOURNAMENT_SIZE, len(pool)))
        return max(entrants, key=lambda n: (n.fitness, -n.seq))

    def observe(self, state: SearchState, node: GraphNode) -> None:
        ps = _state(state)
        if node.node_id in ps["island_of"]:
            return  # redelivered verdict
        k = len(ps["members"])
        queue = ps["requests"].get(node.parent_id, [])
        if queue:
            island = queue.pop(0)
        elif node.parent_id in ps["island_of"]:
            island = ps["island_of"][node.parent_id]
        else:  # a root nobody asked for (e.g. seeded from an earlier job): round-robin
            island = ps["next_root"] % k
            ps["next_root"] += 1
        ps["island_of"][node.node_id] = island
        ps["members"][island].append(node.node_id)
        node.island = island
        ps["evals"] += 1
        interval = int(cfg(state.config, "migration_interval", DEFAULT_MIGRATION_INTERVAL))
        if ps["evals"] % interval == 0:
            self._migrate(state, ps)

    @staticmethod
    def _migrate(state: SearchState, ps: dict[str, Any]) -> None:
        """Copy each island's best correct kernel to the next island (ring)."""
        k = len(ps["members"])
        bests: list[str | None] = []
        for members in ps["members"]:
            correct = [state.nodes[m] for m in members if m in state.nodes and state.nodes[m].correct]
            bests.append(max(correct, key=lambda n: (n.fitness, -n.seq)).node_id if correct else None)
        # Decided from the pre-migration populations, so a migrant cannot hop two islands at once.
        for src, best in enumerate(bests):
            dst = (src + 1) % k
            if best is not None and best not in ps["members"][dst]:
                ps["members"][dst].append(best)
                ps["migrations"].append([ps["evals"], src, dst, best])
