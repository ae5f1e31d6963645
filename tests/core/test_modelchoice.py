"""The model bandit (kevolve.modelchoice, used by the controller and the generator): tries every
model, then favours the one whose candidates score."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kevolve.v1 import common_pb2
from kevolve.modelchoice import Observation, arms, choose_model, model_for, observations_from_nodes

MODELS = ["a", "b", "c"]


def test_every_model_is_tried_before_any_repeats() -> None:
    picks = []
    observations: list[tuple[str, float]] = []
    for seed in range(3):
        model = choose_model(MODELS, observations, seed=seed)
        picks.append(model)
        observations.append((model, 0.0))
    assert sorted(picks) == MODELS


@pytest.mark.parametrize("method", ["ucb1", "thompson"])
def test_adapts_to_the_model_whose_candidates_score(method: str) -> None:
    # Simulated job: "b" passes 70% of the time with speedup ~1.4, the others rarely pass.
    quality = {"a": (0.1, 1.0), "b": (0.7, 1.4), "c": (0.2, 0.9)}
    rng = random.Random(7)
    observations: list[tuple[str, float]] = []
    for step in range(150):
        model = choose_model(MODELS, observations, method=method, seed=step)  # type: ignore[arg-type]
        p, speed = quality[model]
        observations.append((model, speed if rng.random() < p else 0.0))
    counts = Counter(m for m, _ in observations[-75:])
    assert counts["b"] > 0.6 * 75, counts
    assert all(counts[m] < counts["b"] for m in ("a", "c"))


def test_deterministic_for_a_seed() -> None:
    obs = [("a", 1.0), ("b", 0.0), ("c", 1.2), ("a", 0.9)]
    assert {choose_model(MODELS, obs, method="thompson", seed=5) for _ in range(5)} == {
        choose_model(MODELS, obs, method="thompson", seed=5)}


def test_observations_from_nodes_skip_unevaluated_and_duplicates() -> None:
    nodes = [
        common_pb2.NodeSummary(node_id="1", verdict=common_pb2.PASSED, fitness=1.3, tunables={"model": "a"}),
        common_pb2.NodeSummary(node_id="1", verdict=common_pb2.PASSED, fitness=1.3, tunables={"model": "a"}),
        common_pb2.NodeSummary(node_id="2", verdict=common_pb2.INCORRECT, fitness=0.0, tunables={"model": "b"}),
        common_pb2.NodeSummary(node_id="3", tunables={"model": "c"}),  # still being evaluated
        common_pb2.NodeSummary(node_id="4", verdict=common_pb2.PASSED, fitness=1.0, tunables={"template": "t"}),
    ]
    assert observations_from_nodes(nodes) == [("a", 1.3), ("b", 0.0)]


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="no models"):
        choose_model([], [])
    with pytest.raises(ValueError, match="unknown bandit method"):
        choose_model(["a"], [("a", 1.0)], method="epsilon")  # type: ignore[arg-type]
    table = {a.model: a for a in arms(["a"], [("a", float("nan")), ("a", -3.0), ("zzz", 1.0)])}
    assert (table["a"].pulls, table["a"].total) == (1, 0.0)


def _judged(**stats: tuple[int, int]) -> list[Observation]:
    """Observations from (judged candidates, passes) per model, on a correctness-only platform
    (every pass has fitness 1, so the reward is the pass rate)."""
    return [(model, 1.0 if i < passes else 0.0) for model, (tries, passes) in stats.items() for i in range(tries)]


def test_untried_models_first_then_the_better_pass_rate() -> None:
    models = ["small", "large"]
    assert model_for(models, _judged()) == "small"
    assert model_for(models, _judged(small=(1, 0))) == "large"
    assert model_for(models, _judged(small=(20, 2), large=(20, 15))) == "large"
    assert model_for(models, _judged(small=(20, 15), large=(20, 2))) == "small"
    # A model tried far less gets explored even with a lower observed rate.
    assert model_for(models, _judged(small=(200, 100), large=(1, 0))) == "large"
    assert model_for([], _judged()) == ""
