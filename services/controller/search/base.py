"""The search's moving parts as KernelEvolve names them: fitness F, selection policy,
(universal) operator, termination rule — here the policy and termination interfaces.

The controller's engine owns persistence and messaging; policies are pure functions of the
in-memory graph plus a JSON-serializable ``policy_state`` the engine stores with the job, so
a restarted controller resumes a policy exactly (MCTS statistics, islands) and a fixed seed
reproduces the same choices: every decision draws from ``rng_for(seed, decision_index)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from kevolve.v1 import common_pb2

PASSED = common_pb2.PASSED


@dataclass
class GraphNode:
    """One candidate kernel as the policies see it."""

    node_id: str
    parent_id: str            # "" for a node generated from the spec alone
    generation: int
    seq: int                  # creation order within the job (stable tie-breaker)
    done: bool = False        # final verdict known
    verdict: int = 0          # common_pb2.Verdict value
    fitness: float = 0.0      # 0 unless PASSED (and not an unapproved SUSPICIOUS)
    tunables: dict[str, str] = field(default_factory=dict)
    context_mode: int = 0
    island: int = 0

    @property
    def correct(self) -> bool:
        return self.done and self.verdict == PASSED and self.fitness > 0


@dataclass
class SearchState:
    """What a policy may look at when it chooses the next expansion."""

    job_id: str
    seed: int
    nodes: dict[str, GraphNode]
    pending_parents: list[str]        # parent ids of expansions issued, candidate not back yet
    decisions: int                    # selections made so far in this job (resume-safe counter)
    policy_state: dict[str, Any]      # owned by the policy, persisted by the engine as JSON
    config: dict[str, Any]            # the job's JobConfig as a dict (uct_c, islands, ...)

    def children(self, node_id: str) -> list[GraphNode]:
        return sorted((n for n in self.nodes.values() if n.parent_id == node_id), key=lambda n: n.seq)

    def best(self) -> GraphNode | None:
        correct = [n for n in self.nodes.values() if n.correct]
        return max(correct, key=lambda n: (n.fitness, -n.seq)) if correct else None


@dataclass(frozen=True)
class Selection:
    parent_id: str                    # "" = generate from the spec (a root)
    context_mode: int                 # common_pb2.ContextMode value


def rng_for(seed: int, decision: int) -> random.Random:
    """Independent, reproducible randomness per decision (survives restarts)."""
    return random.Random(f"{seed}:{decision}")


class Policy(Protocol):
    name: str

    def select(self, state: SearchState, rng: random.Random) -> Selection:
        """Choose the node to expand next and the prompt's context mode."""
        ...

    def observe(self, state: SearchState, node: GraphNode) -> None:
        """A node got its final verdict: update ``state.policy_state`` (backups, islands)."""
        ...


@dataclass(frozen=True)
class Progress:
    """What termination rules look at."""

    candidates: int                   # nodes created
    evaluated: int                    # nodes with a final verdict
    elapsed_s: float
    tokens: int
    cost_usd: float
    best_fitness: float
    since_improvement: int            # final verdicts since the best fitness last improved
    in_flight: int


class Termination(Protocol):
    def check(self, progress: Progress, config: dict[str, Any]) -> str | None:
        """Return the name of the rule that ends the job (e.g. "budget"), or None to go on."""
        ...
