"""The evaluator's settings: what an operator sets decides how many evaluations run at once."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from services.evaluator.config import EvaluatorSettings


def test_a_pool_runs_its_concurrency_unless_it_screens_for_others() -> None:
    assert EvaluatorSettings(concurrency=3).slots == 3
    # A screening pool takes one worker's slots for each worker it screens for, up to the
    # host's cores, and never fewer than its own setting.
    cores = os.cpu_count() or 1
    assert EvaluatorSettings(concurrency=1, screens_for=2).slots == max(1, min(cores, 2))
    assert EvaluatorSettings(concurrency=2, screens_for=40).slots == max(2, min(cores, 64))  # 64: the setting's own bound
    assert EvaluatorSettings(concurrency=4, screens_for=0).slots == 4


def test_a_screening_count_that_is_not_a_count_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEVOLVE_EVALUATOR_SCREENS_FOR", "many")
    with pytest.raises(ValidationError, match="screens_for"):
        EvaluatorSettings()
    monkeypatch.setenv("KEVOLVE_EVALUATOR_SCREENS_FOR", "-1")
    with pytest.raises(ValidationError, match="screens_for"):
        EvaluatorSettings()
