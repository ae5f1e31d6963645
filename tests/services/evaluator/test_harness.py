"""Harness behaviour a user notices beyond the corpus: per-case scoring, broken specs, seeds,
comparison rules."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import torch
from evaluator_helpers import FIXTURES, cpu_job

from kevolve.config import REPO_ROOT
from kevolve.platforms import get_platform
from kevolve.specfile import check_outline
from kevolve.v1 import common_pb2
from services.evaluator.compare import Agreement, Mismatch, compare
from services.evaluator.config import EvaluatorSettings
from services.evaluator.harness import Harness
from services.evaluator.protocol import derive_seed
from services.evaluator.sandboxed.inputs import degenerate
from services.evaluator.plan import EvalJob, build_plan

GOOD = FIXTURES / "kernels" / "correct"
SPECS = FIXTURES / "specs"


def test_each_test_case_is_scored_separately_with_its_sizes(cpu_harness: Harness) -> None:
    out = cpu_harness.evaluate(cpu_job(SPECS / "softmax_cases.py", GOOD / "softmax_online.py"))
    assert out.result.verdict == common_pb2.PASSED, out.result.reason
    cases = {c.name: dict(c.sizes) for c in out.result.cases}
    assert cases == {
        "base": {"rows": 8, "cols": 128},
        "wide": {"rows": 8, "cols": 300},
        "narrow": {"rows": 5, "cols": 33},
    }
    assert all(c.bytes_moved > 0 and c.passed for c in out.result.cases)
    assert out.report["plan"]["cases"][1]["variants"] == ["raw", "affine", "sparse", "raw", "affine"]


def test_spec_that_fails_at_run_time_is_an_infra_error_naming_it(
    cpu_harness: Harness, tmp_path: Path
) -> None:
    spec = tmp_path / "broken.py"
    spec.write_text(
        (SPECS / "softmax_small.py")
        .read_text()
        .replace("return torch.softmax(x, dim=-1)", "raise ValueError('reference is broken')")
    )
    out = cpu_harness.evaluate(cpu_job(spec, GOOD / "softmax_rowwise.py"))
    assert out.result.verdict == common_pb2.INFRA_ERROR and out.result.decided_by == "load:reference"
    assert "reference is broken" in out.result.reason


def test_a_variant_the_reference_rejects_falls_back_to_the_spec_s_own_data(
    cpu_harness: Harness, tmp_path: Path
) -> None:
    # A spec whose reference validates its inputs (as binary cross-entropy does) must not be
    # blamed when a trial variant leaves the domain it draws from: that trial uses raw data.
    spec = tmp_path / "validating.py"
    spec.write_text(
        (SPECS / "add_relu_small.py").read_text().replace(
            "return torch.relu(x + y)",
            "if abs(float(x.mean())) > 0.5:\n            raise ValueError('x must be centred')\n"
            "        return torch.relu(x + y)"))
    out = cpu_harness.evaluate(cpu_job(spec, GOOD / "add_relu.py"))
    assert out.result.verdict == common_pb2.PASSED, out.result.reason
    (reference,) = [c for c in out.report["checks"] if c["name"] == "reference"]
    assert "made the reference raise ValueError: x must be centred; used raw inputs" in reference["detail"]


@pytest.mark.parametrize(
    "source, words",
    [
        ("import torch\ndef get_inputs(): return []\n", "lacks Model"),
        ("def broken(:\n", "does not parse"),
    ],
)
def test_unusable_spec_is_rejected_before_anything_runs(
    cpu_harness: Harness, tmp_path: Path, source: str, words: str
) -> None:
    spec = tmp_path / "bad.py"
    spec.write_text(source)
    out = cpu_harness.evaluate(cpu_job(spec, GOOD / "softmax_rowwise.py"))
    assert out.result.verdict == common_pb2.INFRA_ERROR and out.result.decided_by == "load:spec"
    assert words in out.result.reason


def test_unknown_size_in_a_test_case_is_named(cpu_harness: Harness) -> None:
    out = cpu_harness.evaluate(
        cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py", test_cases=[("huge", {"colz": 4})])
    )
    assert out.result.decided_by == "load:spec" and "colz" in out.result.reason


def _plan(**kwargs: object) -> dict[str, object]:
    job = EvalJob(
        spec_source=(REPO_ROOT / "examples" / "softmax.py").read_text(),
        candidate_source="",
        platform=get_platform(REPO_ROOT / "kb", "cpu"),
        **kwargs,
    )  # type: ignore[arg-type]
    return build_plan(job, check_outline(job.spec_source))


def test_screening_sizes_and_seeds() -> None:
    plan = _plan(seed=42)
    case = plan["cases"][0]  # type: ignore[index]
    assert case["sizes"] == {"batch_size": 64, "dim": 1000}  # the spec's cpu_shapes
    seeds = [t["seed"] for t in case["trials"] + case["recheck"]]
    assert len(set(seeds)) == len(seeds) and 42 not in seeds
    assert _plan(seed=42)["cases"][0]["trials"][0]["seed"] == case["trials"][0]["seed"]  # type: ignore[index]
    assert _plan(seed=43)["cases"][0]["trials"][0]["seed"] != case["trials"][0]["seed"]  # type: ignore[index]
    assert _plan(cpu_sizes={"batch_size": 3, "dim": 5})["cases"][0]["sizes"] == {"batch_size": 3, "dim": 5}  # type: ignore[index]
    cuda = EvalJob(
        spec_source=(REPO_ROOT / "examples" / "softmax.py").read_text(),
        candidate_source="",
        platform=get_platform(REPO_ROOT / "kb", "cuda"),
    )
    assert build_plan(cuda, check_outline(cuda.spec_source))["cases"][0]["sizes"] == {}  # GPU: the real sizes
    assert derive_seed(1, "x") != derive_seed(2, "x")


def test_comparison_rules() -> None:
    ref = torch.tensor([[1.0, float("nan"), 3.0, 4.0]])
    assert isinstance(compare([ref], [ref.clone()], 0, 0), Agreement)  # NaN where the reference has NaN
    nan_out = torch.tensor([[float("nan"), float("nan"), 3.0, 4.0]])
    res = compare([ref], [nan_out], 0, 0)
    assert isinstance(res, Mismatch) and res.check == "nan_inf"
    res = compare([ref], [torch.tensor([[1.0, float("nan"), 3.0, 4.5]])], 0, 0)
    assert isinstance(res, Mismatch) and res.check == "allclose" and res.details["boundary_only"] is True
    half = torch.tensor([1.0, 2.0], dtype=torch.float16)
    assert isinstance(compare([half], [half + 0.005], 0, 0), Agreement)  # fp16 tolerance 1e-2
    assert isinstance(compare([half.float()], [half.float() + 0.005], 0, 0), Mismatch)  # fp32 tolerance 1e-4
    assert isinstance(compare([half.float()], [half.float() + 0.005], 0.01, 0.0), Agreement)  # spec atol
    assert compare([ref], [ref.double()], 0, 0).check == "dtype"  # type: ignore[union-attr]
    assert compare([ref], [ref, ref], 0, 0).check == "count"  # type: ignore[union-attr]


def test_degenerate_reference_outputs_are_recognised() -> None:
    assert degenerate([torch.zeros(4, 4)]) == "output 0 is all zeros"
    assert degenerate([torch.full((4, 4), 0.25)]) == "output 0 is constant"
    assert degenerate([torch.randn(4, 4)]) == ""


def test_declared_test_cases_add_shapes_and_never_replace_the_production_one() -> None:
    # A suite spec lists an extra shape (softmax_fp16: short_rows); its own sizes must still be
    # timed on the GPU, or the report would speak of a shape nobody measured.
    source = (REPO_ROOT / "bench" / "suite" / "softmax_fp16.py").read_text()
    cuda = EvalJob(spec_source=source, candidate_source="", platform=get_platform(REPO_ROOT / "kb", "cuda"))
    cases = build_plan(cuda, check_outline(source))["cases"]
    assert [(c["name"], c["sizes"]) for c in cases] == [("default", {}),
                                                       ("short_rows", {"rows": 32768, "cols": 1024})]
    # A declared case that already is the production shape is not doubled.
    same = EvalJob(spec_source=source, candidate_source="", platform=cuda.platform,
                   test_cases=[("prod", {"rows": 8192, "cols": 4096})])
    assert [c["name"] for c in build_plan(same, check_outline(source))["cases"]] == ["prod"]


def test_report_separates_timing_from_the_recheck_after_it(cpu_harness: Harness) -> None:
    # The candidate says when its timing loop is over; the worker closes the timing phase
    # there (on a GPU pool it also gives the GPU lock back) and the re-check on unseen inputs
    # still follows, with its own phase in the report.
    out = cpu_harness.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
    assert out.result.verdict == common_pb2.PASSED, out.result.reason
    worker = list(out.report["phases_s"])
    assert worker.index("candidate_timing") < worker.index("candidate_recheck") < worker.index("compare_recheck")
    child = list(out.report["candidate_phases_s"])
    assert child.index("timing") < child.index("recheck")
    # The trials' time is itemised: the first call (compiling) apart from the others.
    assert {"correctness_trials.inputs", "correctness_trials.first_call", "correctness_trials.calls",
            "correctness_trials.save", "recheck.calls"} <= set(child)
    assert {c["name"]: c["passed"] for c in out.report["checks"]}["recheck"] is True


def test_a_timer_short_of_gpu_memory_fails_the_evaluator_not_the_candidate() -> None:
    # The CUDA timer's own buffers (L2 flush, copy-bandwidth probe) can find the GPU full of
    # other candidates' memory; that is retried as the evaluator's failure, whereas the same
    # words from the candidate's own code are its OUT_OF_MEMORY.
    from services.evaluator.sandboxed.child import _classify, _timing_step
    from services.evaluator.sandboxed.platforms.base import TimerInfraError

    def probe() -> None:
        raise TimerInfraError("no GPU memory for the copy-bandwidth probe: CUDA out of memory")

    with pytest.raises(Exception) as caught:
        _timing_step(probe, "while preparing to time")
    assert (caught.value.verdict, caught.value.decided_by) == ("INFRA_ERROR", "infra:timer")
    try:
        raise RuntimeError("CUDA out of memory. Tried to allocate 1024.00 MiB")
    except RuntimeError as exc:
        assert _classify(exc).verdict == "OUT_OF_MEMORY"


@pytest.mark.parametrize(("own_gib", "asked", "verdict"), [
    (2.0, "1.50 GiB", "INFRA_ERROR"),        # others held the GPU: the evaluator's failure, retried
    (30.0, "20.00 GiB", "OUT_OF_MEMORY"),    # it asked for more than its share: its own
    (39.0, "1024.00 MiB", "OUT_OF_MEMORY"),
])
def test_a_cuda_out_of_memory_error_is_the_candidates_only_when_it_held_or_asked_for_its_share(
    monkeypatch: pytest.MonkeyPatch, own_gib: float, asked: str, verdict: str,
) -> None:
    # Several candidates of several jobs share one GPU: a candidate that held 2 GiB and asked for
    # 1.5 GiB more of an 80 GiB GPU ran out because other processes held the rest.
    from types import SimpleNamespace

    from services.evaluator.sandboxed.child import _classify

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: int(own_gib * 2**30))
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda device=None: int(own_gib * 2**30))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(total_memory=80 * 2**30))
    try:
        raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {asked}. GPU 0 has a total "
                                          "capacity of 79.18 GiB of which 1019.12 MiB is free.")
    except torch.cuda.OutOfMemoryError as exc:
        failure = _classify(exc)
    assert failure.verdict == verdict
    assert failure.decided_by == ("infra:gpu_memory" if verdict == "INFRA_ERROR" else "sandbox:memory")


@pytest.mark.parametrize(("own_gib", "verdict"), [(2.0, "INFRA_ERROR"), (45.0, "OUT_OF_MEMORY")])
def test_a_librarys_failed_allocation_on_a_full_gpu_is_the_candidates_only_when_it_held_its_share(
    monkeypatch: pytest.MonkeyPatch, own_gib: float, verdict: str,
) -> None:
    """cuBLAS could not create its handle (no size said) in a process holding 2 GiB of an
    80 GiB GPU: the GPU was full of other candidates, so the run is retried, not charged; one
    that held over half of the GPU ran it out itself."""
    from types import SimpleNamespace

    from services.evaluator.sandboxed.child import _classify

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: int(own_gib * 2**30))
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda device=None: int(own_gib * 2**30))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(total_memory=80 * 2**30))
    try:
        raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
    except RuntimeError as exc:
        failure = _classify(exc)
    assert failure.verdict == verdict
    assert failure.decided_by == ("infra:gpu_memory" if verdict == "INFRA_ERROR" else "sandbox:memory")


def test_interpreter_children_run_one_thread_per_library(cpu_harness: Harness) -> None:
    """The cpu pool runs an evaluation per core: a child whose BLAS or OpenMP started a
    thread per core as well (and spun waiting for them) made an interpreted 16 x 1024 x 256
    product 80 times slower on a loaded host."""
    env = cpu_harness._env(cpu_job(REPO_ROOT / "examples" / "softmax.py", REPO_ROOT / "examples" / "softmax.py"))
    assert {env[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")} == {"1"}


def test_a_jobs_reference_run_is_shared_by_the_pools_workers(tmp_path: Path) -> None:
    """Two workers of one pool (their own scratch, one object store): the first computes the
    job's reference run and shares it, the second takes it from the store instead of running
    the spec again, and judges the candidate the same way."""
    from kevolve.objstore import LocalStore

    store = LocalStore(tmp_path / "objects")
    workers = [Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path / f"w{i}", timeout_s=90,
                                         memory_mb=4096, warm_pool=False), REPO_ROOT / "kb", store)
               for i in range(2)]
    runs: list[str] = []
    for worker in workers:
        child = worker._child

        def counting(job, mode, work, timeout_s, grace=None, _child=child):  # type: ignore[no-untyped-def]
            runs.append(mode)
            return _child(job, mode, work, timeout_s, grace)

        worker._child = counting  # type: ignore[method-assign]
    job = cpu_job(SPECS / "add_relu_small.py", GOOD / "add_relu.py")
    verdicts = [w.evaluate(job).result.verdict for w in workers]
    for w in workers:
        w.close()
    assert verdicts == [common_pb2.PASSED, common_pb2.PASSED]
    assert runs.count("reference") == 1 and runs.count("candidate") == 2
    assert [k for k in (tmp_path / "objects" / "refcache").iterdir()]


def test_a_gpu_pools_warm_zygote_starts_without_cuda_and_serves_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A GPU pool's zygote also imports torch.compile's stack and the CUDA timer, refuses to
    # start if that created a CUDA context, and forks candidates like any other zygote. Here
    # its GPU mode serves a cpu candidate (no GPU on this machine): the imports, the check
    # and the protocol are the parts under test; tests/services/evaluator/test_gpu.py times
    # real kernels through it.
    import services.evaluator.harness as harness_module

    made: list[harness_module.WarmPool] = []
    real = harness_module.WarmPool

    def gpu_pool(*args, **kwargs):  # type: ignore[no-untyped-def]
        pool = real(*args, **{**kwargs, "gpu": True})
        made.append(pool)
        return pool

    monkeypatch.setattr(harness_module, "WarmPool", gpu_pool)
    harness = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path, timeout_s=120, memory_mb=4096),
                      REPO_ROOT / "kb")
    try:
        out = harness.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
    finally:
        harness.close()
    assert out.result.verdict == common_pb2.PASSED, (out.result.reason, out.report["traceback"][-2000:])
    assert made and made[0].gpu and "warm pool" in out.result.sandbox
    # Forked, not started: the candidate paid no import of torch.
    assert out.report["candidate_phases_s"]["start_and_import"] < 2.0


def test_a_warm_childs_deadline_grows_with_the_workers_grace(tmp_path: Path) -> None:
    # A GPU pool's candidate waits for the timing lock while other candidates are timed; that
    # wait is not its own time. The worker extends the forked child's deadline as it grows
    # (through the zygote's stdin, not the child's scratch), as it does for a fresh process.
    import threading

    from kevolve.exec import sandbox
    from services.evaluator.warm_pool import WarmPool

    spec = tmp_path / "spec.py"
    spec.write_text((SPECS / "softmax_small.py").read_text().replace(
        "class Model(nn.Module):", "import time\n\n\nclass Model(nn.Module):", 1).replace(
        "def forward(self", "def _unused(self", 1) + "\n\nModel.forward = lambda self, *a: time.sleep(3600)\n")
    job = cpu_job(spec, GOOD / "softmax_rowwise.py")
    runs = tmp_path / "runs"
    work = runs / "w"
    work.mkdir(parents=True)
    build_plan(job, check_outline(job.spec_source)).write(work)
    (work / "spec.py").write_text(job.spec_source)
    pool = WarmPool(runs, {"PYTHONPATH": sandbox.child_pythonpath()}, writable=[], isolation="preferred")
    grace = sandbox.Grace()
    grace.pause()  # as while queueing for the GPU lock
    threading.Timer(6.0, grace.resume).start()
    try:
        res = pool.run("reference", work, sandbox.Limits(timeout_s=3.0, memory_mb=4096), grace)
    finally:
        pool.stop()
    assert res.killed_for == "timeout"
    assert 8.0 < res.duration_s < 20.0, res.duration_s   # 3 s of its own + ~6 s of queueing


def test_trial_outputs_are_compared_while_the_child_prepares_its_timing(tmp_path: Path) -> None:
    # The child says when its trial outputs are saved; the worker compares them then, and the
    # child's timing preparation (baselines, inputs) runs meanwhile instead of after.
    harness = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path, timeout_s=120, memory_mb=4096),
                      REPO_ROOT / "kb")
    try:
        good = harness.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
        bad = harness.evaluate(cpu_job(SPECS / "softmax_small.py", FIXTURES / "kernels" / "adversarial"
                                       / "a14_correct_then_garbage.py"))
    finally:
        harness.close()
    assert good.result.verdict == common_pb2.PASSED
    phases = list(good.report["phases_s"])
    assert phases.index("compare_trials") < phases.index("candidate_prepare_timing") < phases.index(
        "candidate_timing")
    assert bad.result.verdict == common_pb2.INCORRECT    # verdicts as before


def test_inputs_that_cannot_be_staged_stop_the_child_at_once_with_a_clear_error(
    cpu_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trial inputs are copied in while the child starts. When that copy fails (a full
    # disk), the evaluator says so, and the child, waiting for its inputs, stops at once
    # instead of running out its deadline.
    import time

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Harness, "_stage_inputs", staticmethod(full_disk))
    started = time.monotonic()
    out = cpu_harness.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
    assert out.result.verdict == common_pb2.INFRA_ERROR and out.result.decided_by == "infra:stage_inputs"
    assert "No space left on device" in out.result.reason
    assert time.monotonic() - started < 60     # the 90 s deadline never came into it


def test_a_childs_start_is_timed_from_its_own_start(tmp_path: Path) -> None:
    # The report's start_and_import: psutil's start time rests on a boot time in whole
    # seconds, so it was up to a second off on every host; the kernel's clock ticks are not.
    import subprocess
    import sys
    import time

    code = ("import time; from services.evaluator.sandboxed.child import _process_age_s; "
            "print(_process_age_s(), flush=True)")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    age = float(out.stdout.strip().splitlines()[-1])
    assert 0.0 < age <= elapsed + 0.02, (age, elapsed)
    assert age > 0.5 * (elapsed - 0.5) or elapsed < 1.0   # it counts the imports, not a fraction of them


def test_a_child_waits_for_inputs_that_arrive_while_it_runs(
    cpu_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The inputs are copied in while the child starts; one that comes late is waited for,
    # file by file, and the verdict is the same.
    import time

    real = Harness._stage_inputs

    def slow(*args: object) -> None:
        time.sleep(1.5)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(Harness, "_stage_inputs", staticmethod(slow))
    out = cpu_harness.evaluate(cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py"))
    assert out.result.verdict == common_pb2.PASSED, out.result.reason
    assert out.report["candidate_phases_s"]["correctness_trials.wait_for_inputs"] > 0.3


def test_a_run_the_scratch_disk_cannot_take_fails_cleanly_and_says_what_it_needs(
    cpu_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reference sets and staged copies of many production-size jobs can fill a GPU host's
    # disk. A run that would go under the reserve is an infrastructure error naming what it
    # writes and the setting; how full the disk is (what other jobs hold) is not told.
    import collections
    import shutil as shutil_module

    from services.evaluator import harness as harness_module

    usage = collections.namedtuple("usage", "total used free")
    job = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
    assert cpu_harness.evaluate(job).result.verdict == common_pb2.PASSED    # its reference is cached now
    reserve = cpu_harness.settings.min_free_disk_mb * 2**20
    real_usage = shutil_module.disk_usage
    monkeypatch.setattr(harness_module.shutil, "disk_usage",
                        lambda path: usage(10 * 2**40, 10 * 2**40 - reserve - 1000, reserve + 1000))
    out = cpu_harness.evaluate(job)     # the staged inputs (a few KB) would cross the reserve
    assert out.result.verdict == common_pb2.INFRA_ERROR and out.result.decided_by == "infra:disk"
    assert "KEVOLVE_EVALUATOR_MIN_FREE_DISK_MB" in out.result.reason and "GiB" in out.result.reason
    assert str(reserve + 1000) not in out.result.reason and "10240" not in out.result.reason
    # Under the reserve already: a spec whose reference is not cached does not start writing
    # it, and cached runs no evaluation reads gave way first (the disk still short after).
    monkeypatch.setattr(harness_module.shutil, "disk_usage", lambda path: usage(10 * 2**40, 10 * 2**40, reserve - 1))
    refs_before = set((cpu_harness.root / "refcache").iterdir())
    new_spec = (SPECS / "softmax_small.py").read_text() + "\n# another spec: no cached reference\n"
    fresh = cpu_harness.evaluate(EvalJob(spec_source=new_spec, candidate_source=job.candidate_source,
                                         platform=job.platform, seed=job.seed))
    assert fresh.result.verdict == common_pb2.INFRA_ERROR and fresh.result.decided_by == "infra:disk"
    assert not set((cpu_harness.root / "refcache").iterdir()) - refs_before   # nothing written
    assert not [p for p in (cpu_harness.root / "refcache").iterdir() if not p.name.startswith(".")]
    monkeypatch.setattr(harness_module.shutil, "disk_usage", real_usage)
    assert cpu_harness.evaluate(job).result.verdict == common_pb2.PASSED    # room again: as before


def test_a_reference_set_larger_than_the_file_limit_fails_naming_the_set_and_the_setting(tmp_path: Path) -> None:
    # A decode step's key/value cache of 2 GiB passed the sandbox's 2 GiB file limit, and the
    # reference run died with a serializer's "unexpected pos": the error names what was too big.
    spec = tmp_path / "big.py"
    spec.write_text(
        "import torch\nimport torch.nn as nn\n\nN = 4200\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return x.sum(dim=1)\n\n\n"
        "def get_inputs():\n    return [torch.randn(N, N)]\n\n\ndef get_init_inputs():\n    return []\n")
    harness = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path / "w", timeout_s=120, memory_mb=4096,
                                        max_file_mb=64), REPO_ROOT / "kb")
    try:
        out = harness.evaluate(cpu_job(spec, GOOD / "softmax_rowwise.py"))
    finally:
        harness.close()
    reason = out.result.reason
    assert "the spec's reference run failed" in reason, reason
    assert "the inputs of" in reason and "weigh 0.07 GiB" in reason and "KEVOLVE_EVALUATOR_MAX_FILE_MB" in reason


def test_shared_reference_runs_are_pruned_to_their_budget_when_a_worker_shares(tmp_path: Path) -> None:
    """The store's shared runs are a cache: a worker that shares a run removes the runs past
    the store's age and size settings, and a worker whose run was pruned computes its own."""
    from kevolve.objstore import LocalStore

    store = LocalStore(tmp_path / "objects")
    stale = store.put_at("refcache/stale.tar", bytes(64))
    os.utime(store.root / stale, (time.time() - 7200, time.time() - 7200))
    worker = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path / "w", timeout_s=90, memory_mb=4096,
                                       warm_pool=False, reference_share_keep_s=3600), REPO_ROOT / "kb", store)
    try:
        job = cpu_job(SPECS / "add_relu_small.py", GOOD / "add_relu.py")
        assert worker.evaluate(job).result.verdict == common_pb2.PASSED
    finally:
        worker.close()
    left = [p.name for p in (store.root / "refcache").iterdir()]
    assert "stale.tar" not in left and len(left) == 1  # this job's run stays


def test_a_cached_reference_run_cannot_be_trimmed_between_its_lookup_and_its_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another evaluation trims the reference cache (over its budget) the moment this one has
    found its run: the run is pinned before it is looked at, so it stays and is used."""
    from services.evaluator import harness as harness_module

    worker = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path / "w", timeout_s=90, memory_mb=4096,
                                       warm_pool=False), REPO_ROOT / "kb")
    job = cpu_job(SPECS / "add_relu_small.py", GOOD / "add_relu.py")
    try:
        assert worker.evaluate(job).result.verdict == common_pb2.PASSED  # computes and caches the run
        worker.refcache.max_entries = 0  # every run no evaluation reads is now over the budget
        real_read = harness_module.ReferenceResult.read

        def read_then_trim(path: Path):  # type: ignore[no-untyped-def]
            found = real_read(path)
            worker.refcache.trim()  # the other evaluation's trim, right after the lookup
            return found

        monkeypatch.setattr(harness_module.ReferenceResult, "read", staticmethod(read_then_trim))
        result = worker.evaluate(job).result
    finally:
        worker.close()
    assert result.verdict == common_pb2.PASSED, result.reason


def test_a_candidates_timeout_grows_with_the_kernels_it_compiles(tmp_path: Path) -> None:
    """Its first call compiles every kernel: a network of many kernels gets more time, up to
    the pool's cap; a request's own timeout stands as given."""
    harness = Harness(EvaluatorSettings(platform="cpu", scratch_dir=tmp_path, timeout_s=100, memory_mb=4096,
                                        timeout_per_kernel_s=2.0, max_timeout_s=250), REPO_ROOT / "kb")
    try:
        one = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
        kernel = one.candidate_source
        assert harness._candidate_timeout(one) == 100 + 2.0 * kernel.count("@triton.jit")
        body = "\n".join(f"@triton.jit\ndef k{i}(x):\n    pass\n" for i in range(100))
        many = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
        many.candidate_source = kernel + "\n" + body
        assert harness._candidate_timeout(many) == 250  # capped
        many.timeout_s = 7.0
        assert harness._candidate_timeout(many) == 7.0
        broken = cpu_job(SPECS / "softmax_small.py", GOOD / "softmax_rowwise.py")
        broken.candidate_source = "def broken(:\n"
        assert harness._candidate_timeout(broken) == 100
    finally:
        harness.close()
