"""Bus handler: ProfileRequest -> sandboxed profiling child(ren) -> report -> ProfileResult.

Profiling never changes a node's fitness: the result only describes the kernel. A request
that cannot be profiled (bad platform, missing spec, a candidate that crashes) still gets a
ProfileResult with ``error`` set, so the controller never waits for an answer that will not come.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import structlog
from prometheus_client import Counter, Histogram

from kevolve import specfile, subjects
from kevolve.bus import Bus, Delivery
from kevolve.config import CommonSettings
from kevolve.exec import sandbox
from kevolve.exec.gpulock import GpuLock
from kevolve.exec.mtia_sim import load_machine
from kevolve.objstore import ObjectStore
from kevolve.platforms import Platform
from kevolve.reports import ProfileReport
from kevolve.v1 import profile_pb2
from services.profiler import analysis, ncu
from services.profiler.config import ProfilerSettings
from services.profiler.protocol import Mode, Observation, ProfilePlan

log = structlog.get_logger("profiler")

PROFILES = Counter("kevolve_profiler_profiles_total", "Profiles produced, by platform and outcome",
                   ["platform", "outcome"])
SECONDS = Histogram("kevolve_profiler_seconds", "Time one profile took", ["platform"],
                    buckets=(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200))

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ProfileFailed(Exception):
    """The profiling child could not produce observations (the message says why)."""

    def __init__(self, message: str, log_tail: str = "", tb: str = "") -> None:
        super().__init__(message)
        self.log_tail = log_tail
        self.tb = tb


class Profiler:
    """Runs the profiling children for one platform (synchronous; called from a worker thread)."""

    def __init__(self, settings: ProfilerSettings, common: CommonSettings, platform: Platform) -> None:
        self.settings = settings
        self.platform = platform
        self.root = settings.scratch_dir.resolve()
        (self.root / "cache").mkdir(parents=True, exist_ok=True)
        self.machine_path: Path | None = None
        self.sram_limit = 0
        if platform.runner == "simulated":
            self.machine_path = (common.kb_dir / platform.machine_model).resolve()
            self.sram_limit = load_machine(self.machine_path).sram_bytes  # a bad model fails at start

    def _child(self, argv: list[str], work: Path, timeout_s: float, tenant: str) -> sandbox.SandboxResult:
        gpu = self.platform.runner == "cuda"
        cache = sandbox.tenant_dir(self.root / "cache", tenant)  # one tenant's compiled code is never another's
        env = {"PYTHONPATH": sandbox.child_pythonpath(), "TRITON_CACHE_DIR": str(cache / "triton")}
        # Set either way: an interpreted kernel on the GPU pool would profile nothing.
        env["TRITON_INTERPRET"] = "0" if gpu else "1"
        if not gpu:
            env.update(sandbox.ONE_THREAD)
        limits = sandbox.Limits(timeout_s=timeout_s, memory_mb=self.settings.memory_mb, address_space=not gpu,
                                max_procs=self.settings.max_procs, gpu=gpu)
        if not gpu:
            return sandbox.run(argv, scratch=work, limits=limits, env=env, writable=[cache],
                               isolation=self.settings.isolation)
        # ncu replays kernels and torch.profiler launches many: either would skew a candidate
        # being timed on the same GPU, so a GPU profile waits for the evaluator's timing lock.
        with GpuLock(self.settings.gpu_lock_dir):
            return sandbox.run(argv, scratch=work, limits=limits, env=env, writable=[cache],
                               readonly=self._tool_dirs(), isolation=self.settings.isolation)

    def _tool_dirs(self) -> list[Path]:
        """Where the profiling tools the child starts live (ncu's installation), read-only."""
        found = shutil.which(self.settings.ncu_path) if self.settings.ncu_path else None
        if not found:
            return []
        real = Path(found).resolve()
        # ncu is a launcher script beside its host/target directories: bind the installation.
        return [real.parent] if real.parent != Path("/usr/bin") else []

    def _observe(self, base: dict[str, Any], mode: Mode, work: Path, tenant: str) -> dict[str, Any]:
        plan = ProfilePlan(mode=mode, out=str(work / f"{mode}.out.json"), **base)
        plan.write(work / f"{mode}.plan.json")
        argv = [sys.executable, "-m", "services.profiler.child", str(work / f"{mode}.plan.json")]
        result = self._child(argv, work, self.settings.timeout_s, tenant)
        if result.killed_for:
            raise ProfileFailed(f"profiling child killed ({result.killed_for}) after "
                                f"{result.duration_s:.1f} s", result.log_tail)
        observation = Observation.read(Path(plan.out))
        if observation is None:
            raise ProfileFailed(f"profiling child exited with {result.returncode} and wrote no result",
                                result.log_tail)
        if not observation.ok:
            failure = observation.failure
            raise ProfileFailed(f"the {'candidate' if plan.candidate_path else 'reference'} failed "
                                f"while profiled: {failure.reason if failure else 'unknown error'}",
                                result.log_tail, failure.traceback if failure else "")
        return observation.observed

    def profile(self, request: profile_pb2.ProfileRequest, spec: str,
                candidate: str | None) -> analysis.Analysis:
        tenant = request.tenant or "default"
        work = sandbox.tenant_dir(self.root / "runs", tenant) / f"run-{uuid.uuid4().hex}"
        work.mkdir(parents=True)
        try:
            (work / "spec.py").write_text(spec)
            if candidate is not None:
                (work / "candidate.py").write_text(candidate)
            if self.machine_path is not None:
                # The child sees only its scratch: the machine model travels as a copy there.
                shutil.copyfile(self.machine_path, work / "machine_model.toml")
            # The interpreter runs at the spec's screening sizes unless the request names sizes.
            sizes = dict(request.sizes) or ({} if self.platform.runner == "cuda" else specfile.outline(spec).cpu_sizes)
            base: dict[str, Any] = {
                "spec_path": str(work / "spec.py"), "candidate_path": str(work / "candidate.py") if candidate else "",
                "sizes": sizes, "iterations": self.settings.iterations,
                "machine_model": str(work / "machine_model.toml") if self.machine_path is not None else ""}
            if self.platform.runner == "cuda":
                return self._profile_cuda(base, work, candidate is not None, tenant)
            observed = self._observe(base, "interp", work, tenant)
            if self.machine_path is not None:
                return analysis.mtia_sim(observed, self.sram_limit)
            return analysis.interpreter(observed)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _profile_cuda(self, base: dict[str, Any], work: Path, is_candidate: bool,
                      tenant: str) -> analysis.Analysis:
        observed = self._observe(base, "torch", work, tenant)
        names = [k["name"] for k in observed.get("kernels", [])]
        # The candidate's own kernels are Triton kernels with plain identifiers; library
        # kernels (memcpy, aten templates) are left out of ncu's filter.
        own = [n for n in names if _IDENT.match(n)] if is_candidate else []
        kernels, problem = self._run_ncu(base, work, own, tenant)
        return analysis.cuda(observed, kernels, problem)

    def _run_ncu(self, base: dict[str, Any], work: Path, names: list[str],
                 tenant: str) -> tuple[list[Any] | None, str | None]:
        exe = shutil.which(self.settings.ncu_path) if self.settings.ncu_path else None
        if not exe:
            why = self.settings.ncu_path or "disabled by KEVOLVE_PROFILER_NCU_PATH"
            return None, f"ncu: not found ({why})"
        ProfilePlan(mode="ncu_target", out=str(work / "ncu_target.out.json"),
                    **{**base, "iterations": 3}).write(work / "ncu_target.plan.json")
        log_file = work / "ncu.csv"
        argv = ncu.command(exe, names, self.settings.ncu_max_launches, str(log_file),
                           [sys.executable, "-m", "services.profiler.child", str(work / "ncu_target.plan.json")])
        result = self._child(argv, work, self.settings.ncu_timeout_s, tenant)
        text = log_file.read_text(errors="replace") if log_file.exists() else ""
        if result.killed_for:
            return None, f"ncu: killed ({result.killed_for}) after {result.duration_s:.0f} s"
        try:
            kernels = ncu.parse_csv(text)
        except ncu.NcuParseError as exc:
            why = ncu.unavailable_reason(text + "\n" + result.log_tail)
            return None, why or f"ncu: exit {result.returncode}, unreadable output ({exc})"
        if not kernels:
            return None, ncu.unavailable_reason(text + result.log_tail) or "ncu: profiled no kernel"
        return kernels, None


class ProfileHandler:
    def __init__(self, bus: Bus, store: ObjectStore, profiler: Profiler) -> None:
        self.bus = bus
        self.store = store
        self.profiler = profiler
        self.platform = profiler.platform.name

    async def _text(self, key: str) -> str:
        return (await asyncio.to_thread(self.store.get, key)).decode("utf-8", errors="replace")

    async def handle(self, request: profile_pb2.ProfileRequest, delivery: Delivery) -> None:
        problem = await self._check(request)
        if problem:  # bad input: answered at once, retrying cannot help
            await self._publish(request, analysis.Analysis(), error=problem, outcome="rejected")
            return
        # Store outages raise here: the bus retries, and give_up answers on the last attempt.
        spec = await self._text(request.spec_key)
        candidate = await self._text(request.candidate_key) if request.candidate_key else None
        started = time.perf_counter()
        try:
            result = await asyncio.to_thread(self.profiler.profile, request, spec, candidate)
        except ProfileFailed as exc:
            SECONDS.labels(self.platform).observe(time.perf_counter() - started)
            details = {"log": exc.log_tail, "traceback": exc.tb}
            await self._publish(request, analysis.Analysis(details=details), error=str(exc), outcome="failed")
            return
        SECONDS.labels(self.platform).observe(time.perf_counter() - started)
        await self._publish(request, result)

    async def _check(self, request: profile_pb2.ProfileRequest) -> str:
        if request.platform and request.platform != self.platform:
            return (f"ProfileRequest for platform {request.platform!r} reached the {self.platform!r} "
                    "profiler pool")
        if not request.spec_key:
            return "ProfileRequest has no spec_key"
        for name, key in (("spec_key", request.spec_key), ("candidate_key", request.candidate_key)):
            if key and not await asyncio.to_thread(self.store.exists, key):
                return f"ProfileRequest.{name} {key!r} names no object in the store"
        bad = [f"{k}={v}" for k, v in request.sizes.items() if v <= 0]
        if bad:
            return f"ProfileRequest.sizes must be positive: {', '.join(bad)}"
        return ""

    async def give_up(self, request: profile_pb2.ProfileRequest, delivery: Delivery,
                      exc: BaseException) -> None:
        error = f"profiler failed after {delivery.num_delivered} attempts: {type(exc).__name__}: {exc}"
        await self._publish(request, analysis.Analysis(), error=error[:2000], outcome="gave_up")

    async def _publish(self, request: profile_pb2.ProfileRequest, a: analysis.Analysis, error: str = "",
                       outcome: str | None = None) -> None:
        result = profile_pb2.ProfileResult(
            job_id=request.job_id, node_id=request.node_id, platform=self.platform, summary=a.summary,
            bottleneck=a.bottleneck if not error else "unknown", metrics=a.metrics, tools=a.tools,
            unavailable=a.unavailable, error=error)
        data = ProfileReport(result=result, details=a.details, request=request).to_json()
        result.report_key = await asyncio.to_thread(self.store.put, data, "reports/profile", ".json")
        msg_id = f"profiled:{request.job_id}:{request.node_id}:{self.platform}:{request.candidate_key}"
        await self.bus.publish(subjects.PROFILED, result, msg_id=msg_id)
        outcome = outcome or "ok"
        PROFILES.labels(self.platform, outcome).inc()
        log.info("profiled", job_id=request.job_id, node_id=request.node_id, outcome=outcome,
                 bottleneck=result.bottleneck, error=error[:200], summary=a.summary[:300])
