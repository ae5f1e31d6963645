"""Choosing the LLM model of an expansion when a job lists several: one multi-armed bandit for
the controller (which picks per expansion from every judged node of the job and puts its
pick in ``ExpandRequest.model``) and the generator (which picks only when a request names no
model, from the nodes the request carries: parent, ancestors, siblings, elites).

The reward, one for both: a node's fitness, 0 for every failure. On a platform that
measures speed that is the kernel's speedup over torch.compile, so the bandit favours the
model whose kernels are fast, not merely correct, which is what the search optimizes; on a
correctness-only platform every pass has fitness 1, so the reward is the pass rate there.
Rewards are divided by the best mean, so the exploration constant means the same for jobs
with speedups around 1.1 and around 5.

Pure functions over observations, deterministic for the same inputs and seed: a fixed job
seed reproduces the search, and a restarted controller makes the same choices.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from kevolve.v1 import common_pb2

Method = Literal["ucb1", "thompson"]
Observation = tuple[str, float]  # (model, reward)


@dataclass
class Arm:
    model: str
    pulls: int = 0
    total: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.pulls if self.pulls else 0.0


def reward(verdict: int, fitness: float) -> float:
    """What one judged candidate earns its model: its fitness if it passed, else 0."""
    return fitness if verdict == common_pb2.PASSED else 0.0


def arms(models: Sequence[str], observations: Iterable[Observation]) -> list[Arm]:
    """Per-model pull counts and reward sums; observations for unknown models are ignored."""
    if not models:
        raise ValueError("no models to choose from")
    table = {m: Arm(m) for m in models}
    for model, value in observations:
        arm = table.get(model)
        if arm is None or not math.isfinite(value):
            continue
        arm.pulls += 1
        arm.total += max(0.0, value)
    return list(table.values())


def choose_model(models: Sequence[str], observations: Iterable[Observation], *, method: Method = "ucb1",
                 seed: int = 0, c: float = math.sqrt(2.0)) -> str:
    """The model to use next.

    Every model is tried once before any is repeated, untried ones in the order listed (a
    job lists its preferred model first). Then UCB1 picks the highest
    ``mean/best + c*sqrt(ln N / n)``; Thompson sampling draws each model's mean from a normal
    posterior whose spread shrinks as ``1/sqrt(n)`` and picks the highest draw. Ties are
    broken by ``seed``, not by list order, so no model is favoured by its position.
    """
    table = arms(models, observations)
    untried = [a.model for a in table if a.pulls == 0]
    if untried:
        return untried[0]
    rng = random.Random(seed)
    best = max(a.mean for a in table) or 1.0
    total = sum(a.pulls for a in table)
    if method == "ucb1":
        scores = [a.mean / best + c * math.sqrt(math.log(total) / a.pulls) for a in table]
    elif method == "thompson":
        scores = [rng.gauss(a.mean / best, 1.0 / math.sqrt(a.pulls)) for a in table]
    else:
        raise ValueError(f"unknown bandit method {method!r} (ucb1 or thompson)")
    top = max(scores)
    return rng.choice([a.model for a, s in zip(table, scores, strict=True) if s == top])


def model_for(models: Sequence[str], observations: Iterable[Observation], *, method: Method = "ucb1",
              seed: int = 0) -> str:
    """The model of one expansion: none listed gives "" (the configured default), one listed
    is that one, several are chosen among by :func:`choose_model`."""
    if len(models) <= 1:
        return "".join(models)
    return choose_model(models, observations, method=method, seed=seed)


def observations_from_nodes(nodes: Iterable[common_pb2.NodeSummary]) -> list[Observation]:
    """(model, reward) for each distinct judged node made by an LLM (``tunables["model"]``)."""
    seen: set[str] = set()
    out: list[Observation] = []
    for node in nodes:
        model = node.tunables.get("model", "")
        if not model or not node.node_id or node.node_id in seen:
            continue
        if node.verdict == common_pb2.VERDICT_UNSPECIFIED:
            continue  # not evaluated yet: no reward to learn from
        seen.add(node.node_id)
        out.append((model, reward(node.verdict, node.fitness)))
    return out
