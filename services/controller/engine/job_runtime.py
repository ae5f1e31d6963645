"""The in-memory view of one running job that the search policy works on.

It is rebuilt from the DB on start (nodes, in-flight expansions, policy_state, decision
counter), so nothing here needs saving beyond what the engine writes in each transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kevolve.platforms import Platform
from kevolve.v1 import common_pb2, job_pb2
from services.controller.search import Policy, Progress, SearchState, make_policy, make_termination
from services.controller.search.base import GraphNode
from services.controller.search.termination import BudgetTermination
from services.controller.store.models import ExpansionRow, JobRow, NodeRow


def graph_fitness(row: NodeRow) -> float:
    """Fitness the policy may see: a suspicious node counts only once a user approved it."""
    if row.verdict == common_pb2.PASSED or (row.verdict == common_pb2.SUSPICIOUS and row.approved):
        return row.fitness
    return 0.0


def to_graph_node(row: NodeRow, final: bool) -> GraphNode:
    fitness = graph_fitness(row)
    verdict = common_pb2.PASSED if fitness > 0 else row.verdict
    return GraphNode(node_id=row.id, parent_id=row.parent_id or "", generation=row.generation, seq=row.seq,
                     done=final, verdict=verdict, fitness=fitness, tunables=dict(row.tunables or {}),
                     context_mode=row.context_mode)


@dataclass
class JobRuntime:
    job_id: str
    tenant: str
    platform: Platform
    config: dict[str, Any]
    created_at: float
    policy: Policy
    termination: BudgetTermination
    state: SearchState
    in_flight: dict[str, str] = field(default_factory=dict)   # expansion_id -> parent id
    # Nodes generated but not yet judged. They count against ``parallelism`` with the
    # expansions: an expansion is only "done" once its candidate has a verdict the policy
    # can learn from (budget accounting, in contrast, counts them as candidates already).
    judging: set[str] = field(default_factory=set)

    @property
    def busy(self) -> int:
        return len(self.in_flight) + len(self.judging)

    @property
    def parallelism(self) -> int:
        return max(1, int(self.config.get("parallelism") or 1))

    def progress(self, job: JobRow) -> Progress:
        return Progress(candidates=job.candidates, evaluated=job.evaluated,
                        elapsed_s=time.time() - self.created_at, tokens=job.prompt_tokens + job.completion_tokens,
                        cost_usd=job.cost_usd, best_fitness=job.best_fitness,
                        since_improvement=job.since_improvement, in_flight=len(self.in_flight))

    def sync_pending(self) -> None:
        self.state.pending_parents = list(self.in_flight.values())


def build_runtime(job: JobRow, platform: Platform, nodes: list[NodeRow], final: set[str],
                  issued: list[ExpansionRow]) -> JobRuntime:
    state = SearchState(job_id=job.id, seed=int(job.config.get("seed", 0)),
                        nodes={n.id: to_graph_node(n, n.id in final) for n in nodes},
                        pending_parents=[], decisions=job.decisions,
                        policy_state=dict(job.policy_state or {}), config=dict(job.config))
    rt = JobRuntime(job_id=job.id, tenant=job.tenant, platform=platform, config=dict(job.config),
                    created_at=job.created_at, policy=make_policy(int(job.config.get("policy", 0))),
                    termination=make_termination(), state=state,
                    in_flight={e.id: e.parent_id for e in issued},
                    judging={n.id for n in nodes if n.id not in final and n.status != job_pb2.DONE})
    rt.sync_pending()
    return rt
