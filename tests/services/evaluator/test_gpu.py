"""GPU-only rows of the integrity checklist and the CUDA timer (skipped without a GPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from evaluator_helpers import FIXTURES, SEED

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from kevolve.v1 import common_pb2
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.plan import EvalJob

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

ADV = FIXTURES / "kernels" / "adversarial"
GOOD = FIXTURES / "kernels" / "correct"


@pytest.fixture(scope="module")
def gpu_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    yield Harness(
        EvaluatorSettings(
            platform="cuda", scratch_dir=tmp_path_factory.mktemp("gpu"), timeout_s=600, memory_mb=32768
        ),
        REPO_ROOT / "kb",
    )


def gpu_job(spec: Path, candidate: Path) -> EvalJob:
    return EvalJob(
        spec_source=spec.read_text(),
        candidate_source=candidate.read_text(),
        platform=get_platform(REPO_ROOT / "kb", "cuda"),
        seed=SEED,
    )


def test_correct_kernel_is_timed_against_both_baselines(gpu_harness: Harness) -> None:
    out = gpu_harness.evaluate(
        gpu_job(REPO_ROOT / "examples" / "softmax.py", GOOD / "softmax_example_spec.py")
    )
    r = out.result
    assert r.verdict == common_pb2.PASSED, (r.decided_by, r.reason, out.report["traceback"][-3000:])
    case = r.cases[0]
    assert case.sizes["batch_size"] == 4096 and case.sizes["dim"] == 4096  # the GPU pool uses the real sizes
    assert case.candidate_ms > 0 and case.eager_ms > 0 and case.compile_ms > 0
    # Ranked per call in a back-to-back loop, host included; GPU time reported beside it.
    assert case.candidate_loop_ms > 0 and case.eager_loop_ms > 0 and case.compile_loop_ms > 0
    assert r.fitness_view == "call_loop" and r.fitness == pytest.approx(case.compile_loop_ms / case.candidate_loop_ms)
    assert case.gpu_fitness == pytest.approx(case.compile_ms / case.candidate_ms)
    assert 0 <= case.candidate_cv < 0.05
    assert r.speed_measured and r.environment["gpu"] and r.environment["torch"]
    # Forked from the tenant's warm zygote (no imports paid), with a CUDA context of its own.
    assert "warm pool" in r.sandbox and out.report["candidate_phases_s"]["start_and_import"] < 2.0
    # GPU times are charged; the host time each contender needs to issue a call is reported beside them.
    extra = out.report["timing"]["0"]["extra"]
    assert all(extra[f"{k}_host_ms"] > 0 for k in ("candidate", "eager", "compile"))
    assert all(0 <= extra[f"{k}_retake_rate"] <= 3 for k in ("candidate", "eager", "compile"))


def test_uninitialized_output_fails_on_the_gpu(gpu_harness: Harness) -> None:
    # A1: torch.empty_like on a caching allocator may return the bytes of a freed tensor;
    # the harness poisons freed memory with NaN and keeps the reference in another process.
    out = gpu_harness.evaluate(
        gpu_job(FIXTURES / "specs" / "softmax_small.py", ADV / "a01_uninitialized_output.py")
    )
    assert out.result.verdict == common_pb2.INCORRECT, out.result.reason
    assert out.result.decided_by in {"trial:allclose", "trial:nan_inf"}


def test_device_fault_is_classified_and_the_next_candidate_is_unaffected(gpu_harness: Harness) -> None:
    bad = gpu_harness.evaluate(gpu_job(FIXTURES / "specs" / "softmax_small.py", ADV / "segfault.py"))
    assert bad.result.verdict in (common_pb2.RUNTIME_ERROR, common_pb2.CRASHED), bad.result.reason
    good = gpu_harness.evaluate(gpu_job(FIXTURES / "specs" / "softmax_small.py", GOOD / "softmax_rowwise.py"))
    assert good.result.verdict == common_pb2.PASSED, good.result.reason


@pytest.fixture(scope="module")
def timer_probe() -> dict[str, float]:
    # A fresh process: this one runs with TRITON_INTERPRET=1 (tests/conftest.py), which would
    # make torch.compile's kernels run under the interpreter.
    env = dict(os.environ, TRITON_INTERPRET="0")
    out = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("gpu_timer_probe.py"))],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_side_stream_work_is_seen_by_the_timer(timer_probe: dict[str, float]) -> None:
    # A3 at run time (the static check already bans streams in candidates): work left on
    # another stream after forward returns shows up as a gap after the end event.
    assert timer_probe["side_gap_ms"] > max(0.05, timer_probe["side_ms"])


def test_cold_l2_timing_agrees_with_do_bench(timer_probe: dict[str, float]) -> None:
    ours, reference = timer_probe["plain_ms"], timer_probe["do_bench_ms"]
    assert abs(ours - reference) / reference < 0.10, (ours, reference)
    assert timer_probe["plain_cv"] < 0.02
    assert ours > 0.9 * timer_probe["floor_ms"] > 0


def test_candidates_prepared_together_are_timed_one_at_a_time(gpu_harness: Harness) -> None:
    # Concurrency above 1 on one GPU: both candidates start and compile side by side, but
    # their timing loops hold the GPU lock in turn: the windows in which each held it never
    # overlap. (Whether the second had to queue depends on when each finished compiling:
    # with the lock held for the timing loop alone, often it does not.)
    from concurrent.futures import ThreadPoolExecutor

    job = gpu_job(REPO_ROOT / "examples" / "softmax.py", GOOD / "softmax_example_spec.py")
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = list(pool.map(gpu_harness.evaluate, [job, job]))
    for out in outs:
        assert out.result.verdict == common_pb2.PASSED, (out.result.reason, out.report["traceback"][-2000:])
        assert 0 <= out.result.cases[0].candidate_cv < 0.05
    (a0, a1), (b0, b1) = sorted(out.report["gpu_lock_window"] for out in outs)
    assert a0 <= a1 <= b0 <= b1, (a0, a1, b0, b1)


def test_timing_inputs_are_drawn_on_the_gpu_and_a_cpu_only_spec_still_gets_them() -> None:
    import types

    from services.evaluator.sandboxed.inputs import make_inputs

    def spec(get_inputs):  # type: ignore[no-untyped-def]
        return types.SimpleNamespace(get_inputs=get_inputs)

    (x,) = make_inputs(spec(lambda: [torch.randn(64, 32)]), seed=3, variant="sparse", device="cuda", on_device=True)
    assert x.is_cuda and x.shape == (64, 32) and bool((x == 0).any())
    # A spec whose get_inputs needs CPU tensors (numpy) is drawn on the CPU and moved.
    (y,) = make_inputs(spec(lambda: [torch.from_numpy(torch.randn(8, 8).numpy())]), seed=3, variant="raw",
                       device="cuda", on_device=True)
    assert y.is_cuda


def test_a_job_that_allows_tf32_says_so_and_names_the_kernels_precision(gpu_harness: Harness) -> None:
    job = gpu_job(FIXTURES / "specs" / "matmul_small.py", GOOD / "matmul.py")
    job.allow_tf32 = True
    out = gpu_harness.evaluate(job)
    r = out.result
    assert r.verdict in (common_pb2.PASSED, common_pb2.SUSPICIOUS), (r.decided_by, r.reason)
    assert r.tf32_allowed and r.dot_precision == "ieee"
