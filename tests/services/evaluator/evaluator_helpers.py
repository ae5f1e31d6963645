"""Helpers shared by the evaluator's test modules (imported by name: tests/ has no packages)."""

from __future__ import annotations

from pathlib import Path

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from services.evaluator.plan import EvalJob

FIXTURES = REPO_ROOT / "tests" / "fixtures"
SEED = 20261121  # fixed so every candidate of a module shares one cached reference run


def cpu_job(spec: Path, candidate: Path, **kwargs: object) -> EvalJob:
    return EvalJob(
        spec_source=spec.read_text(),
        candidate_source=candidate.read_text(),
        platform=get_platform(REPO_ROOT / "kb", "cpu"),
        seed=SEED,
        **kwargs,
    )  # type: ignore[arg-type]
