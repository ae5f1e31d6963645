"""Model choice per expansion: every model gets tried, then the one that passes more wins."""

from __future__ import annotations

from services.controller.bandit import choose_model


def test_untried_models_first_then_the_better_pass_rate() -> None:
    models = ["small", "large"]
    assert choose_model(models, {}) == "small"
    assert choose_model(models, {"small": (1, 0)}) == "large"
    assert choose_model(models, {"small": (20, 2), "large": (20, 15)}) == "large"
    assert choose_model(models, {"small": (20, 15), "large": (20, 2)}) == "small"
    # A model tried far less gets explored even with a lower observed rate.
    assert choose_model(models, {"small": (200, 100), "large": (1, 0)}) == "large"
    assert choose_model([], {}) == ""
