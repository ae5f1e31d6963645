"""A job's baselines timed once, by a process without candidate code, and reused by its candidates.

The cpu pool measures no speed, so these tests let a cpu job through the gate a measuring
pool's full-stage jobs pass (``job_baselines.eligible``): the child mode, the lock handshake,
the caching, the expiry and the fallback are what is under test; test_gpu.py times real
baselines on a GPU.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from evaluator_helpers import FIXTURES, cpu_job

from kevolve.config import REPO_ROOT
from kevolve.reports import CaseTiming
from kevolve.v1 import common_pb2
from services.evaluator import job_baselines
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.protocol import CANDIDATE_FILE, PLAN_FILE, SPEC_FILE, EvalPlan

SPECS = FIXTURES / "specs"
GOOD = FIXTURES / "kernels" / "correct"


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setattr(job_baselines, "eligible", lambda job: job.stage == "full")
    h = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path, timeout_s=120, memory_mb=4096),
                REPO_ROOT / "kb")
    yield h
    h.close()


def _record_children(harness: Harness, runs: list[tuple[str, bool, EvalPlan]],
                     break_baselines: bool = False) -> None:
    child = harness._child

    def recording(job, mode, work, timeout_s, grace=None):  # type: ignore[no-untyped-def]
        plan = EvalPlan.load(work / PLAN_FILE)
        runs.append((mode, (work / CANDIDATE_FILE).exists(), plan))
        if mode == "baselines" and break_baselines:
            (work / SPEC_FILE).write_text("raise RuntimeError('the spec cannot be loaded here')\n")
        return child(job, mode, work, timeout_s, grace)

    harness._child = recording  # type: ignore[method-assign]


def _checks(out) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c["name"]: c["detail"] for c in out.report["checks"]}


def _evaluate_after_baselines(harness: Harness, job: object, count: int) -> list:  # type: ignore[type-arg]
    """The first evaluation starts the job's baselines run; once it has ended, ``count`` more."""
    first = harness.evaluate(job)  # type: ignore[arg-type]
    harness.baselines.wait(120)
    return [first] + [harness.evaluate(job) for _ in range(count)]  # type: ignore[arg-type]


def test_a_jobs_baselines_run_once_without_candidate_code_and_candidates_run_alone(harness: Harness) -> None:
    runs: list[tuple[str, bool, EvalPlan]] = []
    _record_children(harness, runs)
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    outs = _evaluate_after_baselines(harness, job, 2)
    assert [o.result.verdict for o in outs] == [common_pb2.PASSED] * 3, outs[0].result.reason
    modes = [m for m, _, _ in runs]
    assert modes.count("baselines") == 1 and modes.count("candidate") == 3
    # The baselines process never had the candidate's file. The first candidate did not wait
    # for it (it sampled its baselines beside itself); the later ones sampled themselves alone.
    assert [has for m, has, _ in runs if m == "baselines"] == [False]
    assert [plan.time_baselines for m, _, plan in runs if m == "candidate"] == [True, False, False]
    assert "being sampled on their own" in _checks(outs[0])["baselines"]
    assert all("sampled once for this job" in _checks(o)["baselines"] for o in outs[1:])
    # The first evaluation to use them reports their run's GPU-lock window, once.
    assert len(outs[1].report["baseline_lock_window"]) == 2
    assert not outs[0].report["baseline_lock_window"] and not outs[2].report["baseline_lock_window"]


def test_a_confirmation_times_its_baselines_beside_it(harness: Harness) -> None:
    runs: list[tuple[str, bool, EvalPlan]] = []
    _record_children(harness, runs)
    job = dataclasses.replace(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"), stage="confirm")
    out = harness.evaluate(job)
    harness.baselines.wait(120)
    assert out.result.verdict == common_pb2.PASSED
    assert [m for m, _, _ in runs] == ["reference", "candidate"]
    assert runs[-1][2].time_baselines and "baselines" not in _checks(out)


def test_baselines_are_timed_again_when_they_are_old(harness: Harness) -> None:
    runs: list[tuple[str, bool, EvalPlan]] = []
    _record_children(harness, runs)
    harness.baselines.max_age_s = 1.0
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    _evaluate_after_baselines(harness, job, 0)
    time.sleep(1.2)
    stale = harness.evaluate(job)
    harness.baselines.wait(120)
    assert [m for m, _, _ in runs].count("baselines") == 2
    assert "being sampled on their own" in _checks(stale)["baselines"]   # old ones are not used
    # Another job (its own seeds) gets baselines of its own.
    harness.baselines.max_age_s = 600.0
    harness.evaluate(dataclasses.replace(job, seed=job.seed + 1))
    harness.baselines.wait(120)
    assert [m for m, _, _ in runs].count("baselines") == 3


def test_a_failed_baselines_run_leaves_candidates_timing_their_own(harness: Harness) -> None:
    runs: list[tuple[str, bool, EvalPlan]] = []
    _record_children(harness, runs, break_baselines=True)
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    outs = _evaluate_after_baselines(harness, job, 2)
    assert [o.result.verdict for o in outs] == [common_pb2.PASSED] * 3
    # Tried once (the failure is remembered like a success), never charged to the candidates.
    assert [m for m, _, _ in runs].count("baselines") == 1
    assert all(plan.time_baselines for m, _, plan in runs if m == "candidate")
    assert all("could not be timed on their own" in _checks(o)["baselines"] for o in outs[1:])
    assert "spec cannot be loaded" in _checks(outs[1])["baselines"]


def test_settings_can_turn_job_baselines_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_baselines, "eligible", lambda job: True)
    h = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path, timeout_s=120, memory_mb=4096,
                                  job_baselines_max_age_s=0), REPO_ROOT / "kb")
    runs: list[tuple[str, bool, EvalPlan]] = []
    _record_children(h, runs)
    try:
        out = h.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
        h.baselines.wait(120)
    finally:
        h.close()
    assert out.result.verdict == common_pb2.PASSED and "baselines" not in [m for m, _, _ in runs]


def test_merge_keeps_the_candidates_numbers_and_takes_the_baselines() -> None:
    # The candidate's process sampled itself and ran the call loop of all three (interleaved,
    # under the same host load); the job's run sampled the baselines and ran no loop.
    candidate = CaseTiming(candidate_ms=0.5, candidate_loop_ms=0.6, eager_loop_ms=2.3, compile_loop_ms=1.2,
                           cv=0.01, calls=300,
                           extra={"floor_ms": 0.1, "candidate_host_ms": 0.02, "async_gap_ms": 0.0})
    baselines = CaseTiming(eager_ms=2.0, compile_ms=1.0, cv=0.03,
                           extra={"eager_cv": 0.01, "compile_cv": 0.02, "compile_host_ms": 0.05,
                                  "floor_ms": 9.0, "lead_us": 300.0})
    merged = job_baselines.merge(candidate, baselines)
    assert (merged.candidate_ms, merged.candidate_loop_ms, merged.cv, merged.calls) == (0.5, 0.6, 0.01, 300)
    assert (merged.eager_ms, merged.compile_ms, merged.eager_loop_ms, merged.compile_loop_ms) == (2.0, 1.0, 2.3, 1.2)
    # The candidate's own floor and lead stay; only the baselines' own figures come across.
    assert merged.extra["floor_ms"] == 0.1 and "lead_us" not in merged.extra
    assert merged.extra["compile_cv"] == 0.02 and merged.extra["candidate_host_ms"] == 0.02


def test_only_a_measuring_pools_full_stage_uses_job_baselines() -> None:
    from kevolve.platforms import get_platform

    cuda = get_platform(REPO_ROOT / "kb", "cuda")
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    assert not job_baselines.eligible(job)
    gpu = dataclasses.replace(job, platform=cuda)
    assert job_baselines.eligible(gpu)
    assert not job_baselines.eligible(dataclasses.replace(gpu, stage="confirm"))
    assert not job_baselines.eligible(dataclasses.replace(gpu, stage="screen"))
    # GPU time is the fitness of a CUDA-graphs job: its candidates sample all three interleaved.
    assert not job_baselines.eligible(dataclasses.replace(gpu, cuda_graphs=True))


def test_no_candidate_waits_for_its_jobs_baselines_run(harness: Harness) -> None:
    # A baselines run that takes long (a slow torch.compile) holds no candidate back.
    child = harness._child

    def slow(job, mode, work, timeout_s, grace=None):  # type: ignore[no-untyped-def]
        if mode == "baselines":
            time.sleep(20)
        return child(job, mode, work, timeout_s, grace)

    harness._child = slow  # type: ignore[method-assign]
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    started = time.monotonic()
    outs = [harness.evaluate(job) for _ in range(2)]
    took = time.monotonic() - started
    assert [o.result.verdict for o in outs] == [common_pb2.PASSED] * 2
    assert took < 20, took
    assert all("being sampled on their own" in _checks(o)["baselines"] for o in outs)
    harness.baselines.wait(120)
