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


@pytest.fixture(autouse=True)
def _no_baselines_run_outlives_its_test(gpu_harness: Harness) -> Iterator[None]:
    # A job's baselines are sampled in the background; a run left going would share the GPU
    # with the next test's own measurements.
    yield
    gpu_harness.baselines.wait(300)


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
    # Where the time under the GPU lock went, itemised.
    phases = out.report["candidate_phases_s"]
    parts = ("timing.warm", "timing.set_up", "timing.samples", "timing.call_loop")
    assert all(phases[p] > 0 for p in parts) and sum(phases[p] for p in parts) <= phases["timing"] + 0.01


def test_a_jobs_baselines_are_timed_once_and_a_confirmation_times_them_beside_it(gpu_harness: Harness) -> None:
    # Full-stage candidates of one job sample their GPU time alone against baselines one run
    # sampled for the job (no candidate code in that process); the call loop still interleaves
    # all three in the candidate's process; a confirmation samples all three interleaved.
    import dataclasses

    job = gpu_job(REPO_ROOT / "examples" / "softmax.py", GOOD / "softmax_example_spec.py")
    job = dataclasses.replace(job, seed=SEED + 7)   # a job of its own: its baselines are timed here
    gpu_harness.evaluate(job)   # starts the job's baselines run, and does not wait for it
    gpu_harness.baselines.wait(300)
    first, second = gpu_harness.evaluate(job), gpu_harness.evaluate(job)
    confirm = gpu_harness.evaluate(dataclasses.replace(job, stage="confirm"))
    for out in (first, second, confirm):
        assert out.result.verdict == common_pb2.PASSED, (out.result.reason, out.report["traceback"][-2000:])
    checks = [{c["name"]: c["detail"] for c in out.report["checks"]} for out in (first, second, confirm)]
    assert "sampled once for this job" in checks[0]["baselines"] and "sampled once" in checks[1]["baselines"]
    assert "baselines" not in checks[2]
    assert len(first.report["baseline_lock_window"]) == 2 and not second.report["baseline_lock_window"]
    a, b, c = (out.result.cases[0] for out in (first, second, confirm))
    assert (a.eager_ms, a.compile_ms) == (b.eager_ms, b.compile_ms)
    assert all(x.candidate_loop_ms > 0 and x.eager_loop_ms > 0 and x.compile_loop_ms > 0 for x in (a, b, c))
    assert a.candidate_ms > 0 and a.compile_ms > 0
    # Sampled apart or beside the candidate, the baselines agree. (The candidate sampled alone
    # measured 5.6% slower than beside them on an H100, which is why a job whose fitness is GPU
    # time never samples it alone: the fitness here is the call loop's, run interleaved.)
    assert abs(c.compile_ms - a.compile_ms) / c.compile_ms < 0.05, (a.compile_ms, c.compile_ms)
    assert first.result.fitness_view == second.result.fitness_view == "call_loop"
    # The second runs in a spare that built its torch.compile baseline before the request came
    # (from the first one's plan): it compiles nothing of its own, and times the same.
    assert second.report["timing"]["0"]["extra"]["baselines_built_ahead"] == 1.0
    assert second.report["candidate_phases_s"]["prepare_timing.first_calls.compile"] < 0.5
    graphs = gpu_harness.evaluate(dataclasses.replace(job, cuda_graphs=True))
    assert "baselines" not in {c["name"] for c in graphs.report["checks"]}
    # Less time holding the GPU: one contender instead of three.
    held = [out.report["gpu_lock_window"][1] - out.report["gpu_lock_window"][0] for out in (second, confirm)]
    assert held[0] < held[1], held


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


def test_baselines_are_timed_without_autograd_and_compiled_once(timer_probe: dict[str, float]) -> None:
    # A reference whose parameters require grad: sampled with autograd on, torch.compile
    # recompiled under the GPU lock and timed a training-mode forward.
    assert timer_probe["grad_modes"] == [False]
    assert timer_probe["compiled_graphs"] == 1


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
    # Every variant is drawn on the GPU: none falls back to a CPU draw (the draw's tensor would
    # then be made on the CPU and moved).
    made: list[torch.device] = []

    def get_inputs() -> list[torch.Tensor]:
        made.append(torch.empty(0).device)
        return [torch.randn(64, 32)]

    for variant in ("raw", "affine", "sparse"):
        (z,) = make_inputs(spec(get_inputs), seed=3, variant=variant, device="cuda", on_device=True)
        assert z.is_cuda
    assert [d.type for d in made] == ["cuda"] * 3, made
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


def test_outputs_compared_on_the_gpu_give_the_hosts_numbers_and_verdicts() -> None:
    from services.evaluator.compare import Agreement, Mismatch, compare

    g = torch.Generator().manual_seed(5)
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        ref = torch.randn(3000, 1500, generator=g).to(dtype)
        scale = 1e-3 if dtype.itemsize == 2 else 1e-6
        close = (ref.float() * (1 + scale * torch.randn(ref.shape, generator=g))).to(dtype)
        on_gpu, on_host = compare([ref], [close], 0, 0, "cuda"), compare([ref], [close], 0, 0)
        assert isinstance(on_gpu, Agreement) and on_gpu == on_host, (dtype, on_gpu, on_host)
        wrong = close.clone()
        wrong[-1, -5:] = 7
        bad_gpu, bad_host = compare([ref], [wrong], 0, 0, "cuda"), compare([ref], [wrong], 0, 0)
        assert isinstance(bad_gpu, Mismatch) and bad_gpu.reason == bad_host.reason
        nan = close.clone()
        nan[10, 10] = float("nan")
        assert compare([ref], [nan], 0, 0, "cuda").check == "nan_inf"
