"""The adversarial corpus: every cheating or subtly wrong candidate gets its specific verdict,
and every correct candidate passes (no false rejections). Each fixture's first lines say what
it must get: ``# expect: VERDICT decided_by[|alternative]`` and optionally ``# spec: file``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from evaluator_helpers import FIXTURES, cpu_job

from kevolve.v1 import common_pb2
from services.evaluator.harness import Harness

ADVERSARIAL = sorted((FIXTURES / "kernels" / "adversarial").glob("*.py"))
CORRECT = sorted((FIXTURES / "kernels" / "correct").glob("*.py"))


def _header(path: Path) -> tuple[str, set[str], Path]:
    text = path.read_text()
    expect = re.search(r"^# expect: (\w+) (\S+)$", text, re.MULTILINE)
    assert expect, f"{path.name} lacks an '# expect:' line"
    spec = re.search(r"^# spec: (\S+)$", text, re.MULTILINE)
    return (
        expect.group(1),
        set(expect.group(2).split("|")),
        FIXTURES / "specs" / (spec.group(1) if spec else "softmax_small.py"),
    )


def test_corpus_is_large_enough() -> None:
    assert len(ADVERSARIAL) >= 20 and len(CORRECT) >= 10


@pytest.mark.parametrize("path", ADVERSARIAL, ids=lambda p: p.stem)
def test_adversarial_candidate_gets_its_verdict(cpu_harness: Harness, path: Path) -> None:
    verdict, decided_by, spec = _header(path)
    timeout = 6.0 if path.stem == "infinite_loop" else 0.0
    outcome = cpu_harness.evaluate(cpu_job(spec, path, timeout_s=timeout))
    result = outcome.result
    assert common_pb2.Verdict.Name(result.verdict) == verdict, (
        result.decided_by,
        result.reason,
        outcome.report["traceback"][-2000:],
    )
    assert result.decided_by in decided_by, (result.decided_by, result.reason)
    assert result.fitness == 0.0
    assert result.reason  # a user can read why


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_candidate_passes(cpu_harness: Harness, path: Path) -> None:
    _, _, spec = _header(path)
    outcome = cpu_harness.evaluate(cpu_job(spec, path))
    result = outcome.result
    assert result.verdict == common_pb2.PASSED, (
        result.decided_by,
        result.reason,
        outcome.report["traceback"][-3000:],
        outcome.report["log"][-2000:],
    )
    assert result.fitness == 1.0 and not result.speed_measured
    assert [c.name for c in result.cases] and all(c.passed for c in result.cases)
    assert result.sandbox  # says how it was contained
