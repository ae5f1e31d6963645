"""Every termination rule, and the split between "may I issue?" and "is the job over?"."""

from __future__ import annotations

import pytest

from services.controller.search import Progress, make_termination


def prog(**kw: float) -> Progress:
    base = dict(candidates=0, evaluated=0, elapsed_s=0.0, tokens=0, cost_usd=0.0, best_fitness=0.0,
                since_improvement=0, in_flight=0)
    base.update(kw)
    return Progress(**base)  # type: ignore[arg-type]


def test_budget_counts_in_flight_and_waits_for_them() -> None:
    term = make_termination()
    cfg = {"budget": 4}
    assert term.may_issue(prog(candidates=2, evaluated=2, in_flight=1), cfg)
    assert term.remaining(prog(candidates=2, evaluated=2, in_flight=1), cfg) == 1
    # 3 created + 1 in flight = budget: no more issuing, but the job is not over yet.
    p = prog(candidates=3, evaluated=2, in_flight=1)
    assert not term.may_issue(p, cfg) and term.check(p, cfg) is None
    p = prog(candidates=4, evaluated=3, in_flight=0)
    assert term.check(p, cfg) is None  # last candidate still being evaluated
    assert term.check(prog(candidates=4, evaluated=4), cfg) == "budget"


def test_default_budget_applies_when_zero() -> None:
    term = make_termination()
    assert term.remaining(prog(), {"budget": 0}) == 8
    assert term.check(prog(candidates=8, evaluated=8), {}) == "budget"


@pytest.mark.parametrize(("cfg", "p", "reason"), [
    ({"wall_clock_s": 10}, prog(elapsed_s=10.5, in_flight=2, candidates=1), "wall_clock"),
    ({"max_tokens": 1000}, prog(tokens=1000, in_flight=1), "tokens"),
    ({"maxTokens": "1000"}, prog(tokens=1200, in_flight=1), "tokens"),  # MessageToDict spelling
    ({"max_cost_usd": 0.5}, prog(cost_usd=0.51, in_flight=1), "cost"),
    ({"target_speedup": 1.5}, prog(best_fitness=1.6, in_flight=3), "target_speedup"),
])
def test_hard_rules_end_the_job_at_once(cfg: dict, p: Progress, reason: str) -> None:
    term = make_termination()
    assert term.check(p, {"budget": 100, **cfg}) == reason
    assert not term.may_issue(p, {"budget": 100, **cfg})


def test_rules_off_when_unset() -> None:
    p = prog(elapsed_s=1e6, tokens=10**9, cost_usd=1e3, best_fitness=50, since_improvement=99, candidates=1,
             evaluated=1)
    term = make_termination()
    assert term.check(p, {"budget": 100}) is None and term.may_issue(p, {"budget": 100})


def test_target_speedup_ignored_when_fitness_is_not_speed() -> None:
    cfg = {"budget": 100, "target_speedup": 1.0, "fitness_is_speed": False}
    assert make_termination().check(prog(best_fitness=1.0, candidates=1, evaluated=1), cfg) is None


def test_patience_stops_issuing_then_ends_when_settled() -> None:
    term = make_termination()
    cfg = {"budget": 100, "patience": 3}
    assert term.may_issue(prog(since_improvement=2, candidates=5, evaluated=5), cfg)
    p = prog(since_improvement=3, candidates=6, evaluated=5, in_flight=1)
    assert not term.may_issue(p, cfg) and term.check(p, cfg) is None
    assert term.check(prog(since_improvement=3, candidates=6, evaluated=6), cfg) == "patience"
