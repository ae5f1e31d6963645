"""Evaluation throughput of one long search: how fast a pool judges candidates.

`kevolve throughput SPEC --platform P --budget N` submits one job against a running system,
follows it to its end, then reads every candidate's evaluation report and writes a report:

- candidates judged per minute over the job's life (first candidate to the last verdict);
- wall time per evaluation (median, p95), as the evaluator measured it, and the median of
  each phase (worker: static check, reference, staging, candidate run, comparisons; the
  candidate process: import, build, trials, timing preparation, timing, re-check);
- on GPU pools, the GPU's busy share: the seconds candidates held the GPU lock to be timed,
  over the job's wall time.

Reports go to ``--out`` (default: the run dir's ``throughput/``), as JSON and markdown.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kevolve.client.jobclient import ClientError, JobClient
from kevolve.reports import EvaluationReport
from kevolve.v1 import common_pb2, job_pb2


@dataclass
class ThroughputReport:
    spec: str
    platform: str
    job_id: str
    state: str
    candidates: int
    evaluated: int
    wall_s: float                                  # first candidate to last verdict
    per_minute: float                              # evaluations finished per minute of that wall time
    eval_s_median: float
    eval_s_p95: float
    gpu_busy: float | None                         # share of wall time the GPU lock was held (GPU pools)
    phases_median_s: dict[str, float] = field(default_factory=dict)
    candidate_phases_median_s: dict[str, float] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    measured_at: str = ""

    def markdown(self) -> str:
        lines = [f"# Evaluation throughput: {self.spec} on {self.platform}", "",
                 f"Job {self.job_id} ({self.state}), measured {self.measured_at}. "
                 f"Environment: {', '.join(f'{k} {v}' for k, v in sorted(self.environment.items())) or '-'}.", "",
                 "| figure | value |", "|---|---:|",
                 f"| candidates generated / evaluated | {self.candidates} / {self.evaluated} |",
                 f"| search wall time (first candidate to last verdict) | {self.wall_s:.1f} s |",
                 f"| candidates judged per minute | {self.per_minute:.2f} |",
                 f"| wall time per evaluation, median | {self.eval_s_median:.2f} s |",
                 f"| wall time per evaluation, p95 | {self.eval_s_p95:.2f} s |"]
        if self.gpu_busy is not None:
            lines.append(f"| GPU busy (timing candidates) | {self.gpu_busy:.1%} |")
        for title, phases in (("Worker phases (median seconds)", self.phases_median_s),
                              ("Candidate process phases (median seconds)", self.candidate_phases_median_s)):
            if phases:
                lines += ["", f"## {title}", "", "| phase | s |", "|---|---:|"]
                lines += [f"| {name} | {seconds:.2f} |" for name, seconds in phases.items()]
        return "\n".join(lines) + "\n"


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _median_phases(reports: list[dict[str, float]]) -> dict[str, float]:
    names: list[str] = []
    for phases in reports:
        names += [n for n in phases if n not in names]
    return {n: statistics.median(p[n] for p in reports if n in p) for n in names}


def summarize(job: job_pb2.Job, reports: list[EvaluationReport], first_candidate_at: float) -> ThroughputReport:
    """The figures of one finished job from its evaluation reports."""
    full = [r for r in reports if r.result.stage != "screen"] or reports
    ends = [r.gpu_lock_window[-1] for r in full if len(r.gpu_lock_window) >= 2]
    last = max([job.updated_at, *ends])
    wall = max(1e-9, last - first_candidate_at)
    durations = [r.result.duration_s for r in full]
    gpu = [r.gpu_lock_window[-1] - r.gpu_lock_window[0] for r in full if len(r.gpu_lock_window) >= 2]
    environment = next((dict(r.result.environment) for r in full if r.result.environment), {})
    return ThroughputReport(
        spec=job.spec.name, platform=job.platform, job_id=job.job_id, state=job_pb2.JobState.Name(job.state),
        candidates=job.candidates, evaluated=len(full), wall_s=wall, per_minute=60 * len(full) / wall,
        eval_s_median=statistics.median(durations) if durations else 0.0, eval_s_p95=_quantile(durations, 0.95),
        gpu_busy=(sum(gpu) / wall) if gpu else None,
        phases_median_s=_median_phases([r.phases_s for r in full]),
        candidate_phases_median_s=_median_phases([r.candidate_phases_s for r in full if r.candidate_phases_s]),
        environment={k: v for k, v in environment.items() if k in ("gpu", "torch", "triton", "device", "cpu")},
        measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def measure(client: JobClient, spec: Path, platform: str, budget: int, parallelism: int, wait_s: float
            ) -> ThroughputReport:
    config = job_pb2.JobConfig(budget=budget, parallelism=parallelism, policy=job_pb2.GREEDY, seed=11,
                               no_reuse=True, wall_clock_s=wait_s)
    job = client.submit(spec, platform, config)
    deadline = time.monotonic() + wait_s + 120
    while job.state not in (job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED):
        if time.monotonic() > deadline:
            raise ClientError(f"job {job.job_id} did not end within {wait_s + 120:.0f}s")
        time.sleep(2)
        job = client.get(job.job_id)
    nodes = client.candidates(job.job_id)
    reports = [EvaluationReport.read(client.artifact(job.job_id, n.eval_report_key))
               for n in nodes if n.eval_report_key and n.verdict != common_pb2.NO_CODE]
    first = min((n.created_at for n in nodes), default=job.created_at)
    return summarize(job, reports, first)


def write(report: ThroughputReport, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"throughput_{report.spec}_{report.platform}"
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    json_path.write_text(json.dumps(asdict(report), indent=2) + "\n")
    md_path.write_text(report.markdown())
    return json_path, md_path
