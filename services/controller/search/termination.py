"""Termination rules (KernelEvolve's tau): budgets, stalls and thresholds.

The engine asks two questions, and the rules split accordingly:

* ``may_issue(progress, config)`` -- may another expansion be published now?  False once any
  rule fires *or* the candidate budget is fully committed (created + in flight), so the
  budget is never exceeded however many expansions run in parallel.
* ``check(progress, config)`` -- is the job over?  "Hard" rules (wall_clock, tokens, cost,
  target_speedup) end it at once: time/money are spent or the goal is met, so in-flight
  work is abandoned.  "Soft" rules (budget, patience) only stop new expansions; the job ends
  when the in-flight ones have come back and been judged, since they are already paid for
  and may still improve the best kernel.
"""

from __future__ import annotations

from typing import Any

from .base import Progress
from .common import cfg, flag

DEFAULT_BUDGET = 8


def _settled(p: Progress) -> bool:
    """No expansion in flight and every created candidate has its final verdict."""
    return p.in_flight <= 0 and p.evaluated >= p.candidates


class BudgetTermination:
    """Every rule of ``JobConfig``; a 0/absent setting turns its rule off (budget: default 8)."""

    def hard_reason(self, p: Progress, config: dict[str, Any]) -> str | None:
        wall = cfg(config, "wall_clock_s", 0.0)
        if wall and p.elapsed_s >= wall:
            return "wall_clock"
        tokens = cfg(config, "max_tokens", 0.0)
        if tokens and p.tokens >= tokens:
            return "tokens"
        cost = cfg(config, "max_cost_usd", 0.0)
        if cost and p.cost_usd >= cost:
            return "cost"
        target = cfg(config, "target_speedup", 0.0)
        # On correctness-only platforms fitness is not a speedup, so the target means nothing.
        if target and flag(config, "fitness_is_speed", True) and p.best_fitness >= target:
            return "target_speedup"
        return None

    def soft_reason(self, p: Progress, config: dict[str, Any]) -> str | None:
        patience = cfg(config, "patience", 0.0)
        if patience and p.since_improvement >= patience:
            return "patience"
        if p.candidates + p.in_flight >= self.budget(config):
            return "budget"
        return None

    def budget(self, config: dict[str, Any]) -> int:
        return int(cfg(config, "budget", DEFAULT_BUDGET))

    def remaining(self, p: Progress, config: dict[str, Any]) -> int:
        """How many more expansions may be issued now (0 when any rule has fired)."""
        if self.hard_reason(p, config) or self.soft_reason(p, config):
            return 0
        return max(0, self.budget(config) - p.candidates - p.in_flight)

    def may_issue(self, p: Progress, config: dict[str, Any]) -> bool:
        return self.remaining(p, config) > 0

    def check(self, p: Progress, config: dict[str, Any]) -> str | None:
        hard = self.hard_reason(p, config)
        if hard:
            return hard
        soft = self.soft_reason(p, config)
        if soft and _settled(p):
            return soft
        return None
