"""Choosing the LLM model of each expansion when a job lists several (UCB1 over pass rates).

Deterministic given the job's history, so a fixed seed still reproduces the search and a
restarted controller makes the same choice. Rewards come from the DB (expansions joined to
their nodes), so nothing extra needs persisting.
"""

from __future__ import annotations

import math

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from kevolve.v1 import common_pb2

from .models import ExpansionRow, NodeRow


def choose_model(models: list[str], stats: dict[str, tuple[int, int]]) -> str:
    """``stats``: model -> (judged candidates, passes). Untried models go first, in order."""
    if not models:
        return ""
    for model in models:
        if stats.get(model, (0, 0))[0] == 0:
            return model
    total = sum(stats[m][0] for m in models)

    def ucb(model: str) -> float:
        tries, passes = stats[model]
        return passes / tries + math.sqrt(2 * math.log(total) / tries)

    return max(models, key=lambda m: (ucb(m), -models.index(m)))


def model_stats(s: Session, job_id: str) -> dict[str, tuple[int, int]]:
    passed = case((NodeRow.verdict == common_pb2.PASSED, 1), else_=0)
    rows = s.execute(
        select(ExpansionRow.model, func.count(NodeRow.id), func.coalesce(func.sum(passed), 0))
        .join(NodeRow, NodeRow.expansion_id == ExpansionRow.id)
        .where(ExpansionRow.job_id == job_id, NodeRow.verdict != 0)
        .group_by(ExpansionRow.model)
    ).all()
    return {model: (int(n), int(p)) for model, n, p in rows}
