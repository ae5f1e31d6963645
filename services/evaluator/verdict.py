"""What an evaluation learned (``RunState``, filled by the harness) turned into the
EvaluationResult and the JSON report."""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from kevolve.reports import (LOG_CHARS, CaseTiming, Check, EvaluationPlanSummary, EvaluationReport, KernelLaunches,
                             Mismatch, PlannedCase)
from kevolve.v1 import common_pb2, evaluation_pb2

from .plan import EvalJob
from .precision import dot_precisions
from .protocol import EvalPlan, PlanCase, ReferenceCase

SUSPICIOUS_SPEEDUP = 10.0  # KernelBench's excessive-speedup flag
FLOOR_SLACK = 0.9  # below 90% of bytes/peak-bandwidth is physically implausible


@dataclass
class Outcome:
    """The result to publish and the report to store (whose ``result`` is the same message)."""

    evaluation: EvaluationReport

    @property
    def result(self) -> evaluation_pb2.EvaluationResult:
        return self.evaluation.result

    @property
    def report(self) -> dict[str, Any]:
        """The report as its JSON document reads (what the object store gets)."""
        return self.evaluation.model_dump(mode="json")

    @property
    def passed(self) -> bool:
        return self.result.verdict == common_pb2.PASSED


@dataclass
class RunState:
    """What the evaluation learned so far; turned into a result by verdict.build_outcome."""

    verdict: str = "PASSED"
    decided_by: str = ""
    reason: str = ""
    checks: list[Check] = field(default_factory=list)
    log: str = ""
    traceback: str = ""
    mismatch: Mismatch | None = None
    kernels: list[KernelLaunches] = field(default_factory=list)
    # Largest errors of the outputs that matched, per case index.
    errors: dict[int, dict[str, float]] = field(default_factory=dict)
    timings: dict[str, CaseTiming] = field(default_factory=dict)   # by case index, as a string
    environment: dict[str, str] = field(default_factory=dict)
    sandbox_mode: str = ""
    killed_for: str = ""
    ref_meta: dict[str, ReferenceCase] = field(default_factory=dict)
    # Where the evaluation's wall time went, in seconds, in order (the report's "phases_s").
    phases: dict[str, float] = field(default_factory=dict)
    # When this evaluation held the GPU lock (epoch seconds, [taken, given back]), if it did.
    gpu_lock_window: list[float] = field(default_factory=list)
    # When its job's baselines run held the GPU lock, if this is the first evaluation to use them.
    baseline_lock_window: list[float] = field(default_factory=list)
    child_phases: dict[str, float] = field(default_factory=dict)  # as the candidate process saw them
    _mark: float = field(default_factory=time.perf_counter)

    def phase(self, name: str) -> None:
        """Close the phase that ended now: the time since the previous mark goes to ``name``."""
        now = time.perf_counter()
        self.phases[name] = round(self.phases.get(name, 0.0) + now - self._mark, 3)
        self._mark = now

    def fail(self, verdict: str, decided_by: str, reason: str) -> None:
        if self.verdict == "PASSED":
            self.verdict, self.decided_by, self.reason = verdict, decided_by, reason

    @property
    def failed(self) -> bool:
        return self.verdict != "PASSED"

    def check(self, name: str, passed: bool, detail: str = "") -> None:
        self.checks.append(Check(name=name, passed=passed, detail=detail))


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def fitness_view(job: EvalJob, timings: list[CaseTiming]) -> tuple[str, str]:
    """(view, note): which time decides fitness, the call loop (host included) unless the
    job's model runs under CUDA graphs (then the host issues nothing per call, and GPU time
    alone counts). One view for every case: a timer that measured no call loop for some case
    ranks the whole evaluation by GPU time, and the note says so."""
    if job.platform.speed == "none":
        return "none", ""
    if job.platform.speed == "simulated":
        return "simulated", ""
    if job.cuda_graphs:
        return "gpu_time", ""
    if all(t.candidate_loop_ms > 0 and (t.compile_loop_ms or t.eager_loop_ms) > 0 for t in timings):
        return "call_loop", ""
    return "gpu_time", " (GPU time: no call loop was measured)"


def _case_result(case: PlanCase, errors: dict[str, float], timing: CaseTiming, view: str, note: str,
                 ref: ReferenceCase) -> evaluation_pb2.CaseResult:
    cr = evaluation_pb2.CaseResult(
        name=case.name,
        passed=True,
        bytes_moved=float(ref.bytes_moved),
        declared_bytes=ref.declared_bytes,
        flops=ref.declared_flops,
        max_abs_error=errors.get("max_abs_error", 0.0),
        max_rel_error=errors.get("max_rel_error", 0.0),
    )
    cr.sizes.update(case.full_sizes)
    cr.candidate_ms = timing.candidate_ms
    cr.eager_ms = timing.eager_ms
    cr.compile_ms = timing.compile_ms
    cr.candidate_loop_ms = timing.candidate_loop_ms
    cr.eager_loop_ms = timing.eager_loop_ms
    cr.compile_loop_ms = timing.compile_loop_ms
    cr.candidate_cv = timing.cv
    cr.simulated = timing.simulated
    baseline = cr.compile_ms or cr.eager_ms
    if cr.candidate_ms > 0 and baseline > 0:
        cr.gpu_fitness = baseline / cr.candidate_ms
    loop_baseline = cr.compile_loop_ms or cr.eager_loop_ms
    if cr.candidate_loop_ms > 0 and loop_baseline > 0:
        cr.loop_fitness = loop_baseline / cr.candidate_loop_ms
    if view == "none":
        cr.fitness = 1.0
        cr.reason = "correct (this platform measures no speed)"
    elif view == "call_loop":
        cr.fitness = cr.loop_fitness
        cr.reason = (f"{cr.candidate_loop_ms:.4g} ms per call in a loop vs torch.compile {cr.compile_loop_ms:.4g} ms, "
                     f"eager {cr.eager_loop_ms:.4g} ms (GPU time {cr.candidate_ms:.4g} vs {cr.compile_ms:.4g} ms)")
    elif cr.gpu_fitness > 0:
        cr.fitness = cr.gpu_fitness
        if cr.simulated:  # never let an estimate read like a measured GPU time
            cr.reason = (f"simulated {cr.candidate_ms:.4g} ms vs the reference's unfused operators "
                         f"{cr.eager_ms:.4g} ms (machine-model estimates)")
        else:
            cr.reason = (
                f"{cr.candidate_ms:.4g} ms vs torch.compile {cr.compile_ms:.4g} ms, eager {cr.eager_ms:.4g} ms{note}"
            )
    else:
        cr.reason = "correct, but the platform returned no time"
    return cr


def _output_bytes(meta: ReferenceCase) -> int:
    def itemsize(name: str) -> int:
        dtype = getattr(torch, name.removeprefix("torch."), None)
        return dtype.itemsize if isinstance(dtype, torch.dtype) else 1

    return sum(math.prod(o.shape) * itemsize(o.dtype) for o in meta.outputs)


def _floor(cr: evaluation_pb2.CaseResult, floor: float, meta: ReferenceCase | None) -> float:
    """The least time the case's bytes take: its inputs and outputs at peak bandwidth, or its
    outputs alone where PyTorch itself beats that (a slice, a strided view, a gather reads
    only part of its inputs: a kernel reading the same part is no cheat)."""
    fastest = min((ms for ms in (cr.eager_ms, cr.compile_ms) if ms > 0), default=0.0)
    if floor > 0 and 0 < fastest < floor * FLOOR_SLACK and meta is not None and meta.bytes_moved > 0:
        return floor * min(1.0, _output_bytes(meta) / meta.bytes_moved)
    return floor


def _suspicion(cases: list[evaluation_pb2.CaseResult], timings: dict[str, CaseTiming],
               ref_meta: dict[str, ReferenceCase]) -> tuple[str, str]:
    for index, cr in enumerate(cases):
        extra = timings[str(index)].extra if str(index) in timings else {}
        floor = _floor(cr, float(extra.get("floor_ms", 0.0)), ref_meta.get(str(index)))
        gap = float(extra.get("async_gap_ms", 0.0))
        if gap > max(0.05, cr.candidate_ms):
            return "timing:async_work", (
                f"case {cr.name}: the device stayed busy {gap:.4g} ms after the timed "
                f"{cr.candidate_ms:.4g} ms ended (work on another stream?)"
            )
        if cr.fitness > SUSPICIOUS_SPEEDUP:
            return "timing:excessive_speedup", f"case {cr.name}: {cr.fitness:.1f}x faster than torch.compile"
        for what, ms in (("", cr.candidate_ms), (" per call in the call loop", cr.candidate_loop_ms)):
            if floor > 0 and 0 < ms < floor * FLOOR_SLACK:
                return "timing:below_physical_floor", (
                    f"case {cr.name}: {ms:.4g} ms{what} is below the "
                    f"{floor:.4g} ms the bytes it must move take at peak bandwidth"
                )
    return "", ""


def build_outcome(job: EvalJob, plan: EvalPlan | None, state: RunState, duration_s: float) -> Outcome:
    result = evaluation_pb2.EvaluationResult(
        platform=job.platform.name,
        stage=job.stage,
        speed_measured=job.platform.speed != "none",
        duration_s=duration_s,
        worker=worker_name(),
        sandbox=state.sandbox_mode,
    )
    planned = plan.cases if plan is not None else []
    cases: list[evaluation_pb2.CaseResult] = []
    timings = [state.timings.get(str(case.index)) or CaseTiming() for case in planned]
    view, note = fitness_view(job, timings)
    if not state.failed:
        for case, timing in zip(planned, timings, strict=True):
            cases.append(_case_result(case, state.errors.get(case.index, {}), timing, view, note,
                                      state.ref_meta.get(str(case.index)) or ReferenceCase()))
    result.cases.extend(cases)
    result.fitness_view = view
    result.dot_precision = ", ".join(dot_precisions(job.candidate_source))
    result.tf32_allowed = job.allow_tf32
    result.environment.update(state.environment)
    if state.failed:
        result.verdict = common_pb2.Verdict.Value(state.verdict)
        result.decided_by, result.reason = state.decided_by, state.reason
        result.fitness = 0.0
        if state.mismatch:
            result.max_abs_error = float(state.mismatch.max_abs_error or 0.0)
    else:
        fits = [c.fitness for c in cases if c.fitness > 0]
        fitness = (
            math.exp(sum(math.log(f) for f in fits) / len(fits)) if fits and len(fits) == len(cases) else 0.0
        )
        result.max_abs_error = max((c.max_abs_error for c in cases), default=0.0)
        rule, why = _suspicion(cases, state.timings, state.ref_meta) if job.platform.speed != "none" else ("", "")
        result.fitness = fitness
        if rule:
            result.verdict, result.decided_by, result.reason = common_pb2.SUSPICIOUS, rule, why
        else:
            result.verdict = common_pb2.PASSED
            result.decided_by = "trial:allclose"
            result.reason = (
                f"correct on {sum(len(c.trials) for c in planned)} trials and "
                f"{sum(len(c.recheck) for c in planned)} re-checks over {len(cases)} case(s)"
                + {"measured": f"; fitness {fitness:.3g}x vs torch.compile"
                   + (" per call in a loop, host included" if view == "call_loop" else " in GPU time"),
                   "simulated": f"; simulated fitness {fitness:.3g}x vs the unfused reference"}.get(
                       job.platform.speed, "")
            )
            if fitness == 0.0 and job.platform.speed != "none":
                result.verdict, result.decided_by = common_pb2.INFRA_ERROR, "timing:missing"
                result.reason = "correct, but no timing came back for every case"
    return Outcome(EvaluationReport(
        result=result,
        checks=state.checks,
        log=state.log[-LOG_CHARS:],
        traceback=state.traceback,
        mismatch=state.mismatch,
        kernels=state.kernels,
        timing=state.timings,
        gpu_wait_s=state.phases.get("gpu_wait", 0.0),
        gpu_lock_window=state.gpu_lock_window,
        baseline_lock_window=state.baseline_lock_window,
        finished_at=time.time(),
        phases_s=state.phases,
        candidate_phases_s=state.child_phases,
        plan=EvaluationPlanSummary(cases=[
            PlannedCase(name=c.name, sizes=c.full_sizes, trials=len(c.trials), variants=[d.variant for d in c.trials])
            for c in planned]),
    ))
