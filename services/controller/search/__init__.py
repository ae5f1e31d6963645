"""Selection policies and termination rules of the search (see ``base`` for the interfaces).

The engine calls ``make_policy(job.config.policy)`` and ``make_termination()`` once per job.
"""

from __future__ import annotations

from kevolve.v1 import job_pb2

from .base import GraphNode, Policy, Progress, SearchState, Selection, Termination, rng_for
from .greedy import GreedyPolicy
from .termination import BudgetTermination

__all__ = [
    "BudgetTermination",
    "GraphNode",
    "Policy",
    "Progress",
    "SearchState",
    "Selection",
    "Termination",
    "make_policy",
    "make_termination",
    "rng_for",
]


def make_policy(policy: int | str) -> Policy:
    """The policy for a ``job_pb2.SelectionPolicy`` value (or its name); UNSPECIFIED = greedy."""
    value = job_pb2.SelectionPolicy.Value(policy) if isinstance(policy, str) else int(policy)
    if value in (job_pb2.SELECTION_POLICY_UNSPECIFIED, job_pb2.GREEDY):
        return GreedyPolicy()
    factories = _extra_policies()
    if value in factories:
        return factories[value]()
    raise ValueError(f"unknown selection policy {policy!r}")


def _extra_policies() -> dict[int, type]:
    # Imported lazily so a problem in one policy module cannot break greedy jobs.
    from .evolutionary import EvolutionaryPolicy
    from .mcts import MctsPolicy
    from .random_policy import RandomPolicy

    return {job_pb2.MCTS: MctsPolicy, job_pb2.EVOLUTIONARY: EvolutionaryPolicy, job_pb2.RANDOM: RandomPolicy}


def make_termination() -> BudgetTermination:
    return BudgetTermination()
