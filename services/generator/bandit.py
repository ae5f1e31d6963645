"""Choosing among several LLMs by how well their candidates score (a multi-armed bandit).

Pure functions over observations, so any service can use them without shared state:

- the controller, which sees every evaluation, can keep observations per job and put its
  pick in ``ExpandRequest.model``;
- the generator, when ``ExpandRequest.model`` is empty, rebuilds observations from the
  NodeSummaries the request already carries (parent, ancestors, siblings, elites: each has
  ``tunables["model"]`` and a fitness) with :func:`observations_from_nodes`, and calls
  :func:`choose_model`.

A reward is a node's fitness (speedup over torch.compile; 0 for any failure). Rewards are
normalised by the best mean seen so the exploration constant means the same for jobs with
speedups around 1.1 and around 5.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from kevolve.v1 import common_pb2

Method = Literal["ucb1", "thompson"]


@dataclass
class Arm:
    model: str
    pulls: int = 0
    total: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.pulls if self.pulls else 0.0


def arms(models: Sequence[str], observations: Iterable[tuple[str, float]]) -> list[Arm]:
    """Per-model pull counts and reward sums; observations for unknown models are ignored."""
    if not models:
        raise ValueError("no models to choose from")
    table = {m: Arm(m) for m in models}
    for model, reward in observations:
        arm = table.get(model)
        if arm is None or not math.isfinite(reward):
            continue
        arm.pulls += 1
        arm.total += max(0.0, reward)
    return list(table.values())


def choose_model(models: Sequence[str], observations: Iterable[tuple[str, float]], *, method: Method = "ucb1",
                 seed: int = 0, c: float = math.sqrt(2.0)) -> str:
    """The model to use next.

    Every model is tried once before any is repeated (untried ones in random order by
    ``seed``). Then UCB1 picks the highest ``mean/best + c*sqrt(ln N / n)``; Thompson
    sampling draws each model's mean from a normal posterior whose spread shrinks as
    ``1/sqrt(n)`` and picks the highest draw. Same inputs and seed give the same choice.
    """
    table = arms(models, observations)
    rng = random.Random(seed)
    untried = [a.model for a in table if a.pulls == 0]
    if untried:
        return rng.choice(untried)
    best = max(a.mean for a in table) or 1.0
    total = sum(a.pulls for a in table)
    if method == "ucb1":
        scores = [a.mean / best + c * math.sqrt(math.log(total) / a.pulls) for a in table]
    elif method == "thompson":
        scores = [rng.gauss(a.mean / best, 1.0 / math.sqrt(a.pulls)) for a in table]
    else:
        raise ValueError(f"unknown bandit method {method!r} (ucb1 or thompson)")
    top = max(scores)
    # Ties (equal scores) are broken by the seed, not by list order, so no model is favoured.
    return rng.choice([a.model for a, s in zip(table, scores, strict=True) if s == top])


def observations_from_nodes(nodes: Iterable[common_pb2.NodeSummary]) -> list[tuple[str, float]]:
    """(model, fitness) for each distinct evaluated node made by an LLM (tunables["model"])."""
    seen: set[str] = set()
    out: list[tuple[str, float]] = []
    for node in nodes:
        model = node.tunables.get("model", "")
        if not model or not node.node_id or node.node_id in seen:
            continue
        if node.verdict == common_pb2.VERDICT_UNSPECIFIED:
            continue  # not evaluated yet: no reward to learn from
        seen.add(node.node_id)
        out.append((model, node.fitness if node.verdict == common_pb2.PASSED else 0.0))
    return out
