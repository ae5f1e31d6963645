"""`kevolve bench` against the real system on the cpu platform: the whole suite, correctness only."""

from __future__ import annotations

from pathlib import Path

import pytest

from kevolve.client.bench import discover_specs, run_bench
from kevolve.client.launcher import start_system
from kevolve.config import REPO_ROOT

# A whole bench: about 3 minutes on 2 cores, more on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SUITE = REPO_ROOT / "bench" / "suite"


def test_whole_suite_runs_as_jobs_and_every_spec_gets_a_verified_kernel(tmp_path: Path) -> None:
    # The cpu run of bench/suite (screening sizes, Triton interpreter, offline generator):
    # every spec's first draft must pass the evaluator (budget 1; bench/results/suite_cpu.md
    # runs budget 3; expansions through the system are tested by tests/e2e and the corpus
    # handful of tests/bench/test_corpus_system.py).
    system = start_system(tmp_path / "run", ("cpu",))
    try:
        result = run_bench(SUITE, "cpu", budget=1, out_dir=tmp_path / "out", grpc_target=system.grpc_target,
                           parallel_jobs=3, job_timeout_s=600)
    finally:
        system.stop()
    assert sorted(s.spec for s in result.specs) == sorted(p.stem for p in discover_specs(SUITE))
    failed = [(s.spec, s.state, s.error, s.failures) for s in result.specs if not s.correct]
    assert not failed, failed
    report = (tmp_path / "out" / "suite_cpu.md").read_text()
    assert f"{len(result.specs)}/{len(result.specs)} (100%)" in report and "correctness only" in report
    assert " ms " not in report   # the interpreter never reports a speed
