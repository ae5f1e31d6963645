"""The trusted side of an evaluation: static checks, reference (cached), candidate, comparison.

generate -> check -> time in separate processes: the spec's reference runs in one sandboxed
child (its results cached per spec, sizes and seeds), the candidate in another that only
ever receives inputs, and this process (which no candidate code touches) compares outputs
loaded from files and decides the verdict.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import sys
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import Literal

import structlog
import torch
from prometheus_client import Counter

from kevolve.exec import sandbox
from kevolve.exec.childstatus import ChildFailure
from kevolve.exec.gpulock import GpuLock
from kevolve.objstore import ObjectNotFound, ObjectStore
from kevolve.reports import Mismatch
from kevolve.specfile import SpecError, check_outline

from . import job_baselines, static_check
from .config import EvaluatorSettings
from .gpu_room import GpuRoom, gpu_bytes
from .plan import EvalJob, build_plan, device_of
from .refcache import ReferenceCache
from .protocol import (CANDIDATE_FILE, GO, MACHINE_MODEL_FILE, PHASE1_MARKER, PLAN_FILE, REF_META_FILE, SPEC_FILE,
                       PART_SUFFIX, STOP, TIMED_MARKER, TRIALS_MARKER, CandidateResult, EvalPlan, ReferenceResult,
                       result_file)
from .saved_outputs import OutputComparer
from .verdict import Outcome, RunState, build_outcome
from .warm_pool import WarmPool, ZygoteDied

log = structlog.get_logger("evaluator.harness")

# The GPU's busy fraction of a pool is this counter's rate: the seconds candidates held it
# to be timed (with their baselines), the one part of an evaluation that needs it alone.
GPU_SECONDS = Counter("kevolve_evaluator_gpu_seconds_total",
                      "Seconds this worker held its GPU to time candidates and their baselines", ["platform"])

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _staged_bytes(plan: EvalPlan, ref_dir: Path) -> int:
    """What a candidate's scratch holds at most: the weights and inputs it receives from the
    reference, and two of its outputs files (each is removed once compared, while the child
    may be saving the next)."""
    staged, largest_output = 0, 0
    for case in plan.cases:
        for f in (ref_dir / "ref" / str(case.index)).iterdir():
            if f.name.startswith("expected_"):
                largest_output = max(largest_output, f.stat().st_size)
            else:
                staged += f.stat().st_size
    return staged + 2 * largest_output


def _give_back(gpu_lock: GpuLock | None, state: RunState) -> None:
    """Release the GPU lock if this evaluation holds it; the report keeps when it was held."""
    if gpu_lock is not None and gpu_lock.held:
        gpu_lock.release()
        state.gpu_lock_window = list(gpu_lock.window)


class DiskShort(RuntimeError):
    """The scratch disk cannot take what a run writes without going under its free reserve."""


class Harness:
    def __init__(self, settings: EvaluatorSettings, kb_dir: Path, store: ObjectStore | None = None) -> None:
        self.settings = settings
        self.kb_dir = kb_dir
        # Where the pool's workers share reference runs (None: each worker computes its own).
        self.store = store
        self.root = settings.scratch_dir.resolve()
        self.refcache = ReferenceCache(self.root / "refcache", settings.reference_cache_entries,
                                       settings.reference_cache_mb * 2**20)
        self.gpu_room = GpuRoom(settings)
        (self.root / "runs").mkdir(parents=True, exist_ok=True)
        (self.root / "cache").mkdir(parents=True, exist_ok=True)
        self._pools: dict[str, WarmPool] = {}
        self._pools_lock = threading.Lock()
        self._pruned_at = -math.inf  # when this worker last pruned the shared reference runs
        self.baselines = job_baselines.JobBaselines(
            self._runs, lambda *args: self._child(*args), settings.gpu_lock_dir, settings.reference_timeout_s,
            settings.job_baselines_max_age_s,
            on_gpu_seconds=lambda platform, seconds: GPU_SECONDS.labels(platform).inc(seconds))

    def close(self) -> None:
        """Stop the warm pools (their zygote processes)."""
        with self._pools_lock:
            for pool in self._pools.values():
                pool.stop()
            self._pools.clear()

    def _pool(self, job: EvalJob) -> WarmPool:
        """The tenant's warm pool for this runner: a zygote never serves two tenants."""
        key = (job.platform.runner, job.tenant)
        with self._pools_lock:
            pool = self._pools.get(key)
            if pool is None:
                # Same containment as a fresh child: only the tenant's run directories and
                # compile cache exist in its view.
                pool = WarmPool(
                    self._runs(job),
                    self._env(job),
                    writable=[self._cache(job)],
                    isolation=self.settings.isolation,
                    gpu=job.platform.runner == "cuda",
                    max_file_mb=self.settings.max_file_mb,
                )
                self._pools[key] = pool
                while len(self._pools) > self.settings.warm_pools:
                    # Least recently created first: an idle tenant's zygote gives way.
                    self._pools.pop(next(iter(self._pools))).stop()
            return pool

    def _runs(self, job: EvalJob) -> Path:
        return sandbox.tenant_dir(self.root / "runs", job.tenant)

    def _cache(self, job: EvalJob) -> Path:
        """The tenant's compile caches (Triton, Inductor): a cache entry written by one
        tenant's code is never loaded by another's."""
        return sandbox.tenant_dir(self.root / "cache", job.tenant)

    def _candidate_timeout(self, job: EvalJob) -> float:
        """The request's timeout, else the pool's, raised by ``timeout_per_kernel_s`` for each
        kernel the candidate defines (its first call compiles them all) up to ``max_timeout_s``:
        a network of 70 kernels needs longer than one kernel, not a different limit per spec."""
        if job.timeout_s:
            return job.timeout_s
        base = self.settings.timeout_s
        try:
            kernels = static_check.kernel_count(job.candidate_source)
        except SyntaxError:
            return base  # refused by the static check before it runs
        return max(base, min(self.settings.max_timeout_s, base + self.settings.timeout_per_kernel_s * kernels))

    # -- sandbox plumbing --------------------------------------------------------------------
    def _limits(self, job: EvalJob, timeout_s: float) -> sandbox.Limits:
        gpu = device_of(job.platform) == "cuda"
        return sandbox.Limits(
            timeout_s=timeout_s,
            memory_mb=self.settings.memory_mb,
            address_space=not gpu,
            max_procs=self.settings.max_procs,
            max_file_mb=self.settings.max_file_mb,
            gpu=gpu,
        )

    def _env(self, job: EvalJob) -> dict[str, str]:
        env = {
            "PYTHONPATH": sandbox.child_pythonpath(),
            "TRITON_CACHE_DIR": str(self._cache(job) / "triton"),
            "TORCHINDUCTOR_CACHE_DIR": str(self._cache(job) / "inductor"),
        }
        if job.platform.runner != "cuda":
            env["TRITON_INTERPRET"] = "1"
            # The pool runs one evaluation per core.
            env.update(sandbox.ONE_THREAD)
        else:
            # Compile real kernels even when this worker's own environment asks for the interpreter.
            env["TRITON_INTERPRET"] = "0"
            # Inductor's parallel compile pool would count against the candidate's process cap.
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
            # Availability checks through NVML, not the driver: a warm zygote that initialised
            # CUDA while importing could not fork usable children.
            env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        return env

    def _child(
        self, job: EvalJob, mode: str, work: Path, timeout_s: float, grace: sandbox.Grace | None = None
    ) -> sandbox.SandboxResult:
        if mode in ("candidate", "baselines") and self.settings.warm_pool:
            try:
                return self._pool(job).run(mode, work, self._limits(job, timeout_s), grace)
            except (ZygoteDied, OSError) as exc:  # a broken pool costs speed, not the evaluation
                log.warning("warm pool unavailable; using a fresh process", error=str(exc))
        argv = [sys.executable, "-m", "services.evaluator.sandboxed.child", mode, str(work / PLAN_FILE)]
        return sandbox.run(
            argv,
            scratch=work,
            limits=self._limits(job, timeout_s),
            env=self._env(job),
            writable=[self._cache(job)],
            isolation=self.settings.isolation,
            grace=grace,
        )

    # -- reference ---------------------------------------------------------------------------
    def reference(self, job: EvalJob, plan: EvalPlan) -> tuple[Path | None, ReferenceResult, str]:
        """(cache dir, result, error): the reference run for this spec, sizes and seeds."""
        key = hashlib.sha256(
            json.dumps([job.tenant, job.spec_source, plan.model_dump(), torch.__version__], sort_keys=True).encode()
        ).hexdigest()
        final = self.root / "refcache" / key
        with _LOCKS_GUARD:
            lock = _LOCKS.setdefault(key, threading.Lock())
        with lock:
            # Pinned before it is looked at: another evaluation's trim (which skips pinned runs)
            # could otherwise remove it between the look and the pin (four evaluations of a
            # corpus run failed so, on a cache over its budget). The caller unpins a run it
            # got; any other way out unpins here.
            self.refcache.pin(key)
            try:
                found = self._reference_pinned(job, plan, key, final)
            except BaseException:
                self.refcache.unpin(key)
                raise
            if found[0] is None:
                self.refcache.unpin(key)
            return found

    def _reference_pinned(self, job: EvalJob, plan: EvalPlan, key: str,
                          final: Path) -> tuple[Path | None, ReferenceResult, str]:
        """``reference`` once run ``key`` is pinned (under its lock)."""
        cached = ReferenceResult.read(final / result_file("reference"))
        if cached is not None:
            os.utime(final)  # recently used: kept by the cache trim
            return final, cached, ""
        shared = self._fetch_shared(key, final)
        if shared is not None:
            return final, shared, ""
        self._check_disk(0)  # what the reference writes is known only once it has run
        work = self.root / "refcache" / f".tmp-{uuid.uuid4().hex}"
        work.mkdir()
        plan.write(work)
        (work / SPEC_FILE).write_text(job.spec_source)
        # What a reference run holds is known only once it has run: a quarter of the budget.
        with self.gpu_room.hold(job, lambda budget: budget // 4):
            run = self._child(job, "reference", work, self.settings.reference_timeout_s)
        result = ReferenceResult.read(work / result_file("reference")) or ReferenceResult(status="fail")
        if not result.ok:
            shutil.rmtree(work, ignore_errors=True)
            why = (result.failure.reason if result.failure else "") or (
                f"killed ({run.killed_for})"
                if run.killed_for
                else f"exit {run.returncode}: {run.log_tail[-1500:]}"
            )
            return None, result, f"the spec's reference run failed: {why}"
        os.replace(work, final)
        self._share(key, final)
        self.refcache.trim()
        return final, result, ""

    def _check_disk(self, need_bytes: int) -> None:
        """Raise DiskShort when writing ``need_bytes`` would leave the scratch disk under its
        reserve. Twelve production-size jobs at once, each with its reference sets and every
        candidate's staged copies, can fill a GPU host's disk, and a full disk takes the
        other services down with it. The caller hears what its own run needs; how full the
        disk is (what other jobs hold) goes to this service's log only."""
        keep = self.settings.min_free_disk_mb * 2**20
        if shutil.disk_usage(self.root).free - need_bytes >= keep:
            return
        self.refcache.trim(free_bytes=keep + need_bytes)  # runs no evaluation reads give way first
        free = shutil.disk_usage(self.root).free
        if free - need_bytes >= keep:
            return
        log.warning("scratch disk short", free_mb=free // 2**20, need_mb=need_bytes // 2**20,
                    reserve_mb=self.settings.min_free_disk_mb)
        raise DiskShort(f"the evaluator's scratch disk is too full for this run: it writes "
                        f"{need_bytes / 2**30:.2f} GiB and {keep / 2**30:.2f} GiB are kept free "
                        "(KEVOLVE_EVALUATOR_MIN_FREE_DISK_MB); try again when other jobs have ended")

    def _shared_key(self, key: str) -> str:
        return f"refcache/{key}.tar"

    def _fetch_shared(self, key: str, final: Path) -> ReferenceResult | None:
        """A reference run another worker of the pool shared for this job, unpacked into the
        local cache; None when there is none (or it cannot be read: computed here instead)."""
        if self.store is None or not self.settings.reference_share_mb:
            return None
        try:
            data = self.store.get(self._shared_key(key))
        except ObjectNotFound:
            return None
        except Exception as exc:  # noqa: BLE001 - the store is a shortcut: any failure means compute
            log.warning("shared reference unreadable; computing it", error=repr(exc))
            return None
        work = self.root / "refcache" / f".tmp-{uuid.uuid4().hex}"
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
                tar.extractall(work, filter="data")  # no links, no paths out of ``work``
            result = ReferenceResult.read(work / result_file("reference"))
            if result is None or not result.ok:
                raise ValueError("the shared run holds no successful reference result")
            os.replace(work, final)
        except Exception as exc:  # noqa: BLE001
            log.warning("shared reference unusable; computing it", error=repr(exc))
            shutil.rmtree(work, ignore_errors=True)
            return None
        log.info("reference run taken from the object store", key=self._shared_key(key))
        return result

    def _share(self, key: str, final: Path) -> None:
        """Offer a reference run this worker computed to the pool's other workers."""
        if self.store is None or not self.settings.reference_share_mb:
            return
        size = sum(f.stat().st_size for f in final.rglob("*") if f.is_file())
        if size > self.settings.reference_share_mb * 2**20:
            return
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(final, arcname=".")
        try:
            self.store.put_at(self._shared_key(key), buffer.getvalue())
        except Exception as exc:  # noqa: BLE001 - sharing is an optimisation; the verdict never depends on it
            log.warning("could not share the reference run", error=repr(exc))
        self._prune_shared()

    def _prune_shared(self) -> None:
        """Keep the store's shared reference runs to their age and size (settings above): a
        worker whose run is gone computes its own, so pruning never changes a verdict."""
        now = time.monotonic()
        if self.store is None or now - self._pruned_at < self.settings.reference_share_prune_s:
            return
        self._pruned_at = now
        try:
            removed = self.store.prune("refcache", self.settings.reference_share_keep_s,
                                       self.settings.reference_share_total_mb * 2**20)
        except Exception as exc:  # noqa: BLE001 - a store that cannot prune still serves
            log.warning("could not prune the shared reference runs", error=repr(exc))
            return
        if removed:
            log.info("shared reference runs pruned", removed=removed)

    # -- one evaluation ----------------------------------------------------------------------
    def evaluate(self, job: EvalJob) -> Outcome:
        started = time.perf_counter()
        state = RunState()
        plan: EvalPlan | None = None
        try:
            plan = self._evaluate(job, state)
        except Exception as exc:  # the evaluator's own failure is never the candidate's
            state.fail("INFRA_ERROR", "infra:evaluator", f"{type(exc).__name__}: {exc}")
        return build_outcome(job, plan, state, time.perf_counter() - started)

    def _evaluate(self, job: EvalJob, state: RunState) -> EvalPlan | None:
        try:
            violations = static_check.check_source(job.candidate_source)
        except (SyntaxError, ValueError) as exc:
            state.check("static", False, f"does not parse: {exc}")
            state.fail("COMPILE_ERROR", "load:syntax", f"candidate does not parse: {exc}")
            return None
        state.check("static", not violations, "; ".join(f"[{v.rule}] {v}" for v in violations) or "clean")
        state.phase("static_check")
        if violations:
            first = violations[0]
            state.fail("REJECTED_STATIC", f"static:{first.rule}", str(first))
            return None
        try:
            outline = check_outline(job.spec_source)
            plan = build_plan(job, outline)
        except (SpecError, ValueError) as exc:
            state.fail("INFRA_ERROR", "load:spec", f"the spec is unusable: {exc}")
            return None
        try:
            ref_dir, ref, error = self.reference(job, plan)
        except DiskShort as exc:
            state.fail("INFRA_ERROR", "infra:disk", str(exc))
            return plan
        try:
            return self._judge(job, plan, state, ref_dir, ref, error)
        finally:
            if ref_dir is not None:
                self.refcache.unpin(ref_dir.name)

    def _judge(self, job: EvalJob, plan: EvalPlan, state: RunState, ref_dir: Path | None, ref: ReferenceResult,
               error: str) -> EvalPlan:
        """The candidate judged against its reference run (``ref_dir``, pinned in the cache)."""
        try:
            if ref_dir is not None:
                self._check_disk(_staged_bytes(plan, ref_dir))
        except DiskShort as exc:
            state.fail("INFRA_ERROR", "infra:disk", str(exc))
            return plan
        state.phase("reference")
        if ref_dir is None:
            state.check("reference", False, error)
            state.fail("INFRA_ERROR", "load:reference", error)
            return plan
        state.ref_meta = ref.cases
        notes = [n for c in ref.cases.values() for n in c.notes]
        state.check("reference", True, "; ".join(notes) or "reference outputs computed")
        with self.gpu_room.hold(job, lambda budget: gpu_bytes(plan, ref_dir)):
            baselines = self._job_baselines(job, plan, ref_dir, ref, state)
            run_plan = plan if baselines is None else plan.model_copy(update={"time_baselines": False})
            self._run_candidate(job, run_plan, ref_dir, ref, state, baselines)
        return plan

    def _job_baselines(self, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult,
                       state: RunState) -> job_baselines.Baselines | None:
        """The job's baselines when this candidate may be timed alone against them (None: it
        times eager and torch.compile beside itself, interleaved)."""
        if self.baselines.max_age_s <= 0 or not job_baselines.eligible(job):
            return None
        baselines = self.baselines.get(job, plan, ref_dir, ref)
        if baselines is None:
            state.check("baselines", True, "the job's baselines are being sampled on their own; until then "
                        "its candidates sample them beside themselves, interleaved")
            return None
        # The first evaluation to use them reports their run's GPU time (its search's share).
        state.baseline_lock_window = baselines.take_window()
        if not baselines.ok:
            state.check("baselines", True, "the job's baselines could not be timed on their own "
                        f"({baselines.error[:300]}); timed beside the candidate instead")
            return None
        return baselines

    def _compare_device(self, job: EvalJob) -> str:
        """Where outputs are compared: a GPU pool's worker uses its GPU (see compare.py)."""
        if job.platform.runner == "cuda" and self.settings.compare_on_gpu and torch.cuda.is_available():
            return "cuda"
        return "cpu"

    def _prepare_run(self, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult) -> Path:
        """The run's scratch directory with what the child needs to start: plan, spec,
        candidate and each case's weights. The trial inputs follow (``_stage_inputs``)."""
        work = self._runs(job) / uuid.uuid4().hex
        for case in plan.cases:
            dst = work / "in" / str(case.index)
            dst.mkdir(parents=True)
            shutil.copyfile(ref_dir / "ref" / str(case.index) / "state.pt", dst / "state.pt")
        if plan.machine_model_file:
            # The child sees only its scratch: the machine model travels as a copy there.
            shutil.copyfile(self.kb_dir / job.platform.machine_model, work / MACHINE_MODEL_FILE)
        plan.write(work)
        (work / SPEC_FILE).write_text(job.spec_source)
        (work / CANDIDATE_FILE).write_text(job.candidate_source)
        (work / REF_META_FILE).write_text(ref.model_dump_json())
        return work

    @staticmethod
    def _stage_inputs(plan: EvalPlan, ref_dir: Path, work: Path) -> None:
        """Copies of the reference's input files (never its expected outputs), each renamed
        into place once whole, in the order the child reads them: every case's trials, then
        every case's re-check sets. Copies, not links: the child may write its scratch, and a
        changed input must not reach the reference cache or another candidate."""
        for kind in ("trials", "recheck"):
            for case in plan.cases:
                for i in range(len(case.draws(kind))):
                    name = f"inputs_{kind}{i}.pt"
                    dst = work / "in" / str(case.index) / name
                    part = dst.with_name(name + PART_SUFFIX)
                    shutil.copyfile(ref_dir / "ref" / str(case.index) / name, part)
                    os.replace(part, dst)

    @staticmethod
    def _staging_failed(errors: list[OSError], state: RunState) -> None:
        if errors and not state.failed:
            state.fail("INFRA_ERROR", "infra:stage_inputs", f"the inputs could not be staged ({errors[0]})")

    def _comparer(self, plan: EvalPlan, ref_dir: Path, work: Path, kind: Literal["trials", "recheck"],
                  job: EvalJob) -> OutputComparer:
        return OutputComparer(plan, ref_dir, work, kind, job.atol, job.rtol, self._compare_device(job))

    @staticmethod
    def _apply(comparer: OutputComparer, state: RunState) -> None:
        """A compared set's outcome into the evaluation's state."""
        for index, agg in comparer.errors.items():
            errors = state.errors.setdefault(index, {"max_abs_error": 0.0, "max_rel_error": 0.0})
            for k, v in agg.items():
                errors[k] = max(errors[k], v)
        problem, kind = comparer.problem, comparer.kind
        if problem is None:
            state.check(kind, True, f"{comparer.total} {kind} matched the reference")
            return
        if problem.mismatch is not None:
            state.mismatch = Mismatch.model_validate(problem.mismatch)
        state.fail(problem.verdict, problem.decided_by, problem.reason)
        if problem.verdict == "INCORRECT":
            state.check(kind, False, state.reason)

    def _run_candidate(self, job: EvalJob, plan: EvalPlan, ref_dir: Path, ref: ReferenceResult,
                       state: RunState, baselines: job_baselines.Baselines | None = None) -> None:
        work = self._prepare_run(job, plan, ref_dir, ref)
        timeout = self._candidate_timeout(job)
        holder: dict[str, sandbox.SandboxResult] = {}
        # Preparation (start, compile, correctness) may overlap other candidates on this GPU;
        # timing holds the GPU alone, and the time spent queueing for it is not the candidate's.
        grace = sandbox.Grace()
        gpu_lock = GpuLock(self.settings.gpu_lock_dir) if job.platform.runner == "cuda" else None
        thread = threading.Thread(
            target=lambda: holder.update(run=self._child(job, "candidate", work, timeout, grace)), daemon=True
        )
        thread.start()
        # The inputs are copied in while the child starts, imports the spec and the candidate,
        # builds its model and runs its first trials; it waits for each file it reads.
        staging_errors: list[OSError] = []

        def stage() -> None:
            try:
                self._stage_inputs(plan, ref_dir, work)
            except OSError as exc:
                staging_errors.append(exc)
                (work / STOP).touch()

        stager = threading.Thread(target=stage, daemon=True)
        stager.start()
        state.phase("stage_inputs")
        trials = self._comparer(plan, ref_dir, work, "trials", job)
        recheck = self._comparer(plan, ref_dir, work, "recheck", job)
        compared = phase1_seen = False
        timed = False
        try:
            while thread.is_alive():
                self._staging_failed(staging_errors, state)
                if not compared and not state.failed:
                    # Each output as soon as it is saved, while the child runs the next trial.
                    trials.advance()
                if not compared and ((work / TRIALS_MARKER).exists() or (work / PHASE1_MARKER).exists()):
                    # Every trial output is saved; the child goes on preparing its timing
                    # (baselines, inputs) while the last of them are compared here.
                    compared = True
                    state.phase("candidate_correctness")
                    if not state.failed:
                        trials.finish()
                        self._apply(trials, state)
                    state.phase("compare_trials")
                if compared and not phase1_seen and (work / PHASE1_MARKER).exists():
                    phase1_seen = True
                    state.phase("candidate_prepare_timing")
                    if not state.failed and gpu_lock is not None:
                        grace.pause()
                        gpu_lock.acquire()
                        grace.resume()
                        state.phase("gpu_wait")   # queued behind other candidates' timing
                    (work / (STOP if state.failed else GO)).touch()
                if not timed and phase1_seen and (work / TIMED_MARKER).exists():
                    # Timing is over: the re-check and the comparisons need no exclusive GPU.
                    timed = True
                    state.phase("candidate_timing")
                    _give_back(gpu_lock, state)
                if timed:
                    recheck.advance()  # judged after the child's own outcome (_classify_run)
                thread.join(0.02)
            stager.join()
            self._staging_failed(staging_errors, state)
            run = holder["run"]
            if not compared:
                state.phase("candidate_correctness")
            elif not phase1_seen:
                state.phase("candidate_prepare_timing")
            else:
                state.phase("candidate_recheck" if timed else "candidate_timing")
            state.sandbox_mode, state.killed_for, state.log = run.mode, run.killed_for, run.log_tail
            self._classify_run(run, work, phase1_seen, recheck, job, state, baselines)
        finally:
            _give_back(gpu_lock, state)
            if len(state.gpu_lock_window) >= 2:
                GPU_SECONDS.labels(job.platform.name).inc(max(0.0, state.gpu_lock_window[-1] - state.gpu_lock_window[0]))
            if not self.settings.keep_runs:
                shutil.rmtree(work, ignore_errors=True)

    def _classify_run(
        self,
        run: sandbox.SandboxResult,
        work: Path,
        phase1_seen: bool,
        recheck: OutputComparer,
        job: EvalJob,
        state: RunState,
        baselines: job_baselines.Baselines | None = None,
    ) -> None:
        result = CandidateResult.read(work / result_file("candidate"))
        state.kernels = list(result.kernels) if result is not None else []
        if run.killed_for == "timeout":
            state.fail(
                "TIMEOUT", "sandbox:timeout", f"no result within {run.duration_s:.0f}s; process group killed"
            )
        elif run.killed_for == "memory":
            state.fail(
                "OUT_OF_MEMORY", "sandbox:memory", f"resident memory passed {self.settings.memory_mb} MB"
            )
        elif run.killed_for == "procs":
            state.fail("REJECTED_RUNTIME", "sandbox:procs", f"more than {self.settings.max_procs} processes")
        elif result is not None and result.status == "fail":
            failure = result.failure or ChildFailure(reason="")
            state.traceback = failure.traceback
            state.fail(failure.verdict or "RUNTIME_ERROR", failure.decided_by or "runtime:exception", failure.reason)
        elif run.signal:
            state.fail("CRASHED", "sandbox:signal", f"the candidate process died from signal {run.signal}")
        elif result is None:
            state.fail(
                "CRASHED", "sandbox:exit", f"the candidate process exited ({run.returncode}) without a result"
            )
        if state.failed:
            state.check("candidate", False, state.reason)
            return
        if result is None or not result.ok or not phase1_seen:
            state.fail("INFRA_ERROR", "infra:protocol",
                       f"candidate run ended in state {result.status if result is not None else None!r}")
            return
        state.check(
            "runtime_guards", True, "kernels launched; no torch compute, threads, aliasing or patching"
        )
        recheck.finish()
        self._apply(recheck, state)
        state.phase("compare_recheck")
        state.child_phases = dict(result.phases_s)
        state.timings = dict(result.timings)
        state.environment = dict(result.environment)
        if baselines is not None:
            state.timings = {index: job_baselines.merge(timing, baselines.timings[index])
                             if index in baselines.timings else timing for index, timing in result.timings.items()}
            state.check("baselines", True, "eager and torch.compile GPU times sampled once for this job "
                        f"({time.time() - baselines.timed_at:.0f} s before), by a process without candidate "
                        "code; the candidate sampled alone by the same method; the call loop interleaved all three")
