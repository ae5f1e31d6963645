"""A job's baselines, timed once: eager PyTorch and torch.compile for every case of its plan.

Sampling all three contenders' GPU time for every candidate spent two thirds of the GPU lock
on numbers that do not change between the candidates of a job. A measuring pool (cuda) now
samples the baselines' GPU time once per job plan on its GPU, in a ``baselines`` child that
loads the spec and no candidate code, and a full-stage candidate samples itself alone by the
same method and is compared with them. The fitness of such a job is the call loop's (see
``eligible``), so what decides a verdict is measured as before. What stays as it was:

* the call loop: it charges host time, which follows the host's load of the moment (other
  candidates compiling beside it), so each candidate still calls all three back to back,
  interleaved, in its own process; baselines looped minutes earlier were measured 2x off;
* a confirmation run (a would-be new best, timed again) samples all three interleaved in the
  candidate's process, so a job's best is always judged against baselines timed beside it;
* the method: the same cold-L2 samples, lead, batches and stopping rule;
* a run that cannot time its baselines (the child failed, the GPU ran short) leaves the job's
  candidates timing theirs themselves, as before: the failure costs speed, never a verdict.

Baselines older than ``max_age_s`` are timed again, so a long search follows the GPU's
clocks and temperature rather than its first minute's.

The run goes on in the background: no candidate waits for it (it compiles torch.compile's
baseline, 10-13 s for a 16-bit RMSNorm on an H100, and a slow compile could hold a whole
job). Until its numbers are in, the job's candidates sample all three interleaved, as before.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from kevolve.exec import sandbox
from kevolve.exec.gpulock import GpuLock, device_key
from kevolve.reports import CaseTiming

from .plan import EvalJob
from .protocol import (GO, PHASE1_MARKER, REF_META_FILE, SPEC_FILE, TIMED_MARKER, BaselineResult, EvalPlan,
                       ReferenceResult, result_file)

log = structlog.get_logger("evaluator.baselines")

RunChild = Callable[[EvalJob, str, Path, float, sandbox.Grace], sandbox.SandboxResult]
KEPT = 256  # jobs' baselines kept in memory (the oldest give way)


@dataclass
class Baselines:
    """One job plan's baselines on this worker's GPU, or why there are none."""

    timings: dict[str, CaseTiming]        # by case index, as a string; empty when the run failed
    timed_at: float                       # epoch seconds
    error: str = ""
    lock_window: list[float] = field(default_factory=list)   # when their run held the GPU
    # Whether an evaluation's report carries ``lock_window`` yet: the first to use these
    # baselines does, so a search's GPU-busy account includes the run once.
    reported: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return bool(self.timings) and not self.error

    def take_window(self) -> list[float]:
        """The run's GPU-lock window, to the first caller only."""
        with self._lock:
            if self.reported or len(self.lock_window) < 2:
                return []
            self.reported = True
            return list(self.lock_window)


def eligible(job: EvalJob) -> bool:
    """Whether a candidate of this job may sample its GPU time alone against its job's
    baselines: a measuring platform, the full stage (a confirmation samples all three again),
    and a fitness taken from the call loop, which every candidate still runs interleaved.

    A job whose model runs under CUDA graphs takes its fitness from GPU time, and there a
    candidate sampled alone is not always timed as one sampled beside its baselines: on an
    H100 a softmax kernel measured 5.6% slower alone, in two runs (the H200 showed no such
    shift). Such jobs sample all three interleaved, as before."""
    return (job.platform.runner == "cuda" and job.platform.speed == "measured" and job.stage == "full"
            and not job.cuda_graphs)


def merge(candidate: CaseTiming, baselines: CaseTiming) -> CaseTiming:
    """The candidate's own timing (its GPU time, and the call loop of all three it ran) with
    its job's sampled baseline GPU times, their spread and their host issue times beside it."""
    extra = {**candidate.extra, **{k: v for k, v in baselines.extra.items()
                                  if k.startswith(("eager_", "compile_"))}}
    return candidate.model_copy(update={"eager_ms": baselines.eager_ms, "compile_ms": baselines.compile_ms,
                                        "extra": extra})


class JobBaselines:
    """Baselines per job plan: the first candidate that finds none starts their run in the
    background; one run per plan at a time."""

    def __init__(self, runs_dir: Callable[[EvalJob], Path], run_child: RunChild, lock_dir: Path,
                 timeout_s: float, max_age_s: float,
                 on_gpu_seconds: Callable[[str, float], None] | None = None) -> None:
        self._runs_dir = runs_dir
        self._run_child = run_child   # the harness's: fresh process or its tenant's warm pool
        self._lock_dir = lock_dir
        self._timeout_s = timeout_s
        self.max_age_s = max_age_s
        self._on_gpu_seconds = on_gpu_seconds   # (platform, seconds the run held the GPU)
        self._entries: OrderedDict[str, Baselines] = OrderedDict()
        self._running: dict[str, threading.Thread] = {}
        self._guard = threading.Lock()

    @staticmethod
    def key(job: EvalJob, ref_dir: Path) -> str:
        """Same reference run (its cache key covers the tenant, the spec, the plan's sizes, seeds
        and precision policy, and torch's version), platform and GPU: same baselines."""
        return f"{ref_dir.name}:{job.platform.name}:{device_key()}"

    def get(self, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult) -> Baselines | None:
        """The job's baselines (or the failure of their run) when fresh; else None, and their
        run is started in the background unless it is already going."""
        key = self.key(job, ref_dir)
        with self._guard:
            cached = self._entries.get(key)
            if cached is not None and time.time() - cached.timed_at < self.max_age_s:
                self._entries.move_to_end(key)
                return cached
            if key not in self._running:
                thread = threading.Thread(target=self._run, args=(key, job, plan, ref_dir, ref), daemon=True,
                                          name=f"baselines-{ref_dir.name[:8]}")
                self._running[key] = thread
                thread.start()
        return None

    def wait(self, timeout_s: float | None = None) -> None:
        """Until the runs going now have ended (tests; a worker never waits for them)."""
        with self._guard:
            running = list(self._running.values())
        for thread in running:
            thread.join(timeout_s)

    def _run(self, key: str, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult) -> None:
        fresh: Baselines | None = None
        try:
            fresh = self._time(job, plan, ref_dir, ref)
            if self._on_gpu_seconds is not None and len(fresh.lock_window) >= 2:
                self._on_gpu_seconds(job.platform.name, max(0.0, fresh.lock_window[-1] - fresh.lock_window[0]))
        finally:
            with self._guard:
                self._running.pop(key, None)
                if fresh is not None:
                    self._entries[key] = fresh
                    self._entries.move_to_end(key)
                    while len(self._entries) > KEPT:
                        self._entries.popitem(last=False)

    def _time(self, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult) -> Baselines:
        work = self._runs_dir(job) / f"baselines-{uuid.uuid4().hex}"
        try:
            for case in plan.cases:
                case_dir = work / "in" / str(case.index)
                case_dir.mkdir(parents=True)
                shutil.copyfile(ref_dir / "ref" / str(case.index) / "state.pt", case_dir / "state.pt")
            plan.write(work)
            (work / SPEC_FILE).write_text(job.spec_source)
            (work / REF_META_FILE).write_text(ref.model_dump_json())
            window, run = self._run_with_lock(job, work)
            result = BaselineResult.read(work / result_file("baselines"))
            if result is None or not result.ok or not result.timings:
                why = ((result.failure.reason if result is not None and result.failure else "")
                       or (f"killed ({run.killed_for})" if run.killed_for
                           else f"exit {run.returncode}: {run.log_tail[-800:]}"))
                log.warning("job baselines could not be timed; candidates time their own", reason=why[:500])
                return Baselines({}, time.time(), error=why[:2000], lock_window=window)
            log.info("job baselines timed", cases=len(result.timings), seconds=round(run.duration_s, 2))
            return Baselines(dict(result.timings), time.time(), lock_window=window)
        except Exception as exc:  # noqa: BLE001 - the shortcut failed: candidates time their own
            log.warning("job baselines failed; candidates time their own", error=repr(exc))
            return Baselines({}, time.time(), error=f"{type(exc).__name__}: {exc}"[:2000])
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _run_with_lock(self, job: EvalJob, work: Path) -> tuple[list[float], sandbox.SandboxResult]:
        """The child prepares (compiles the baselines) without the GPU lock and times under it,
        the handshake a candidate goes through."""
        holder: dict[str, sandbox.SandboxResult] = {}
        grace = sandbox.Grace()
        gpu_lock = GpuLock(self._lock_dir)
        thread = threading.Thread(
            target=lambda: holder.update(run=self._run_child(job, "baselines", work, self._timeout_s, grace)),
            daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                if not gpu_lock.window and (work / PHASE1_MARKER).exists():
                    grace.pause()
                    gpu_lock.acquire()
                    grace.resume()
                    (work / GO).touch()
                if gpu_lock.held and (work / TIMED_MARKER).exists():
                    gpu_lock.release()
                thread.join(0.02)
        finally:
            gpu_lock.release()
        return list(gpu_lock.window), holder["run"]
