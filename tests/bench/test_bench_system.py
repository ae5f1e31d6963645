"""`kevolve bench` against the real system on the cpu platform (a slice of the suite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kevolve.cli.bench import run_bench
from kevolve.cli.launcher import start_system
from kevolve.config import REPO_ROOT

pytestmark = pytest.mark.slow


def test_suite_slice_runs_as_jobs_and_reports_correctness_only(tmp_path: Path) -> None:
    system = start_system(tmp_path / "run", ("cpu",))
    try:
        result = run_bench(REPO_ROOT / "bench" / "suite", "cpu", budget=1, out_dir=tmp_path / "out",
                           grpc_target=system.grpc_target, parallel_jobs=2, only=["mapid", "rmsnorm_fp16"],
                           job_timeout_s=240)
    finally:
        system.stop()
    assert sorted(s.spec for s in result.specs) == ["mapid", "rmsnorm_fp16"]
    assert all(s.correct for s in result.specs), [(s.spec, s.state, s.error, s.failures) for s in result.specs]
    report = (tmp_path / "out" / "suite_cpu.md").read_text()
    assert "2/2" in report and "correctness only" in report
    assert " ms " not in report   # the interpreter never reports a speed
