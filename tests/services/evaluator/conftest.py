"""Fixtures for the evaluator's tests: one harness per module, so the reference cache is shared."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kevolve.config import REPO_ROOT
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness


@pytest.fixture(scope="module")
def cpu_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    scratch = tmp_path_factory.mktemp("evaluator")
    harness = Harness(
        EvaluatorSettings(platform="cpu", scratch_dir=scratch, timeout_s=90, memory_mb=4096), REPO_ROOT / "kb"
    )
    yield harness
    harness.close()
