"""Turn what an evaluation learned into the EvaluationResult and the JSON report."""

from __future__ import annotations

import math
import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.protobuf.json_format import MessageToDict

from kevolve.v1 import common_pb2, evaluation_pb2

if TYPE_CHECKING:
    from .harness import RunState
    from .plan import EvalJob

SUSPICIOUS_SPEEDUP = 10.0  # KernelBench's excessive-speedup flag
FLOOR_SLACK = 0.9  # below 90% of bytes/peak-bandwidth is physically implausible


@dataclass
class Outcome:
    result: evaluation_pb2.EvaluationResult
    report: dict[str, Any]

    @property
    def passed(self) -> bool:
        return self.result.verdict == common_pb2.PASSED


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _case_result(
    case: dict[str, Any], agg: dict[str, Any], timing: dict[str, Any], speed: str, bytes_moved: float
) -> evaluation_pb2.CaseResult:
    cr = evaluation_pb2.CaseResult(
        name=case["name"],
        passed=True,
        bytes_moved=bytes_moved,
        max_abs_error=agg.get("max_abs_error", 0.0),
        max_rel_error=agg.get("max_rel_error", 0.0),
    )
    cr.sizes.update({k: int(v) for k, v in case["full_sizes"].items()})
    cr.candidate_ms = float(timing.get("candidate_ms", 0.0))
    cr.eager_ms = float(timing.get("eager_ms", 0.0))
    cr.compile_ms = float(timing.get("compile_ms", 0.0))
    cr.candidate_cv = float(timing.get("cv", 0.0))
    cr.simulated = bool(timing.get("simulated", False))
    baseline = cr.compile_ms or cr.eager_ms
    if speed == "none":
        cr.fitness = 1.0
        cr.reason = "correct (this platform measures no speed)"
    elif cr.candidate_ms > 0 and baseline > 0:
        cr.fitness = baseline / cr.candidate_ms
        if cr.simulated:  # never let an estimate read like a measured GPU time
            cr.reason = (f"simulated {cr.candidate_ms:.4g} ms vs the reference's unfused operators "
                         f"{cr.eager_ms:.4g} ms (machine-model estimates)")
        else:
            cr.reason = (
                f"{cr.candidate_ms:.4g} ms vs torch.compile {cr.compile_ms:.4g} ms, eager {cr.eager_ms:.4g} ms"
            )
    else:
        cr.reason = "correct, but the platform returned no time"
    return cr


def _suspicion(cases: list[evaluation_pb2.CaseResult], timings: dict[str, Any]) -> tuple[str, str]:
    for index, cr in enumerate(cases):
        extra = timings.get(str(index), {}).get("extra", {})
        floor = float(extra.get("floor_ms", 0.0))
        gap = float(extra.get("async_gap_ms", 0.0))
        if gap > max(0.05, cr.candidate_ms):
            return "timing:async_work", (
                f"case {cr.name}: the device stayed busy {gap:.4g} ms after the timed "
                f"{cr.candidate_ms:.4g} ms ended (work on another stream?)"
            )
        if cr.fitness > SUSPICIOUS_SPEEDUP:
            return "timing:excessive_speedup", f"case {cr.name}: {cr.fitness:.1f}x faster than torch.compile"
        if floor > 0 and 0 < cr.candidate_ms < floor * FLOOR_SLACK:
            return "timing:below_physical_floor", (
                f"case {cr.name}: {cr.candidate_ms:.4g} ms is below the "
                f"{floor:.4g} ms the bytes it must move take at peak bandwidth"
            )
    return "", ""


def build_outcome(job: EvalJob, plan: dict[str, Any], state: RunState, duration_s: float) -> Outcome:
    result = evaluation_pb2.EvaluationResult(
        platform=job.platform.name,
        stage=job.stage,
        speed_measured=job.platform.speed != "none",
        duration_s=duration_s,
        worker=worker_name(),
        sandbox=state.sandbox_mode,
    )
    cases: list[evaluation_pb2.CaseResult] = []
    if not state.failed:
        aggs = {c["index"]: c for c in state.cases}
        for case in plan["cases"]:
            timing = state.timings.get(str(case["index"]), {})
            bytes_moved = float(state.ref_meta.get(str(case["index"]), {}).get("bytes_moved", 0.0))
            cases.append(
                _case_result(case, aggs.get(case["index"], {}), timing, job.platform.speed, bytes_moved)
            )
    result.cases.extend(cases)
    result.environment.update(state.environment)
    if state.failed:
        result.verdict = common_pb2.Verdict.Value(state.verdict)
        result.decided_by, result.reason = state.decided_by, state.reason
        result.fitness = 0.0
        if state.mismatch:
            result.max_abs_error = float(state.mismatch.get("max_abs_error", 0.0))
    else:
        fits = [c.fitness for c in cases if c.fitness > 0]
        fitness = (
            math.exp(sum(math.log(f) for f in fits) / len(fits)) if fits and len(fits) == len(cases) else 0.0
        )
        result.max_abs_error = max((c.max_abs_error for c in cases), default=0.0)
        rule, why = _suspicion(cases, state.timings) if job.platform.speed != "none" else ("", "")
        result.fitness = fitness
        if rule:
            result.verdict, result.decided_by, result.reason = common_pb2.SUSPICIOUS, rule, why
        else:
            result.verdict = common_pb2.PASSED
            result.decided_by = "trial:allclose"
            result.reason = (
                f"correct on {sum(len(c['trials']) for c in plan['cases'])} trials and "
                f"{sum(len(c['recheck']) for c in plan['cases'])} re-checks over {len(cases)} case(s)"
                + {"measured": f"; fitness {fitness:.3g}x vs torch.compile",
                   "simulated": f"; simulated fitness {fitness:.3g}x vs the unfused reference"}.get(
                       job.platform.speed, "")
            )
            if fitness == 0.0 and job.platform.speed != "none":
                result.verdict, result.decided_by = common_pb2.INFRA_ERROR, "timing:missing"
                result.reason = "correct, but no timing came back for every case"
    report = {
        "result": MessageToDict(result, preserving_proto_field_name=True),
        "checks": state.checks,
        "log": state.log[-20_000:],
        "traceback": state.traceback,
        "mismatch": state.mismatch,
        "kernels": state.kernels,
        "timing": state.timings,
        # Seconds of duration_s spent queued for the GPU behind other candidates' timing.
        "gpu_wait_s": state.phases.get("gpu_wait", 0.0),
        "gpu_lock_window": state.gpu_lock_window,
        "phases_s": state.phases,
        "candidate_phases_s": state.child_phases,
        "plan": {
            "cases": [
                {
                    "name": c["name"],
                    "sizes": c["full_sizes"],
                    "trials": len(c["trials"]),
                    "variants": [t["variant"] for t in c["trials"]],
                }
                for c in plan.get("cases", [])
            ]
        },
    }
    return Outcome(result=result, report=report)
