"""Evaluation throughput of one long search: how fast a pool judges candidates.

`kevolve throughput SPEC --platform P --budget N` submits one job against a running system,
follows it to its end, then reads every candidate's evaluation report and writes a report:

- candidates judged per minute over the job's life (first candidate to the last verdict), and
  evaluations per minute: a would-be best is evaluated twice (its confirmation run), and both
  runs count as work done;
- wall time per evaluation (median, p95), as the evaluator measured it, overall and for
  full-stage runs and confirmations apart, and the median of
  each phase (worker: static check, reference, staging, candidate run, comparisons; the candidate process: import, build, trials, timing preparation, timing,
  re-check);
- on GPU pools, the GPU's busy share: the seconds evaluations held the GPU lock (to time
  candidates, and a job's baselines), over the job's wall time;
- the pipeline a candidate passes (median seconds): from its creation to its screening run,
  that run, from it to its run on the pool, that run; and, by Little's law (expansions in
  flight = throughput x time per expansion), what an expansion spends before its candidate
  exists (retrieval, generation, the controller): the stage that bounds the search's pace;
- timing agreement: a confirmed node was timed twice, by its full-stage run (against its
  job's baselines, sampled once) and by its confirmation (all three interleaved); how far the
  two runs' figures lie apart, beside the timer's own spread within a run (its cv).

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
    evaluated: int                                 # evaluations on the pool (confirmation runs included)
    wall_s: float                                  # first candidate to last verdict
    per_minute: float                              # candidates judged (final verdicts) per minute of that wall time
    eval_s_median: float
    eval_s_p95: float
    gpu_busy: float | None                         # share of wall time the GPU lock was held (GPU pools)
    phases_median_s: dict[str, float] = field(default_factory=dict)
    candidate_phases_median_s: dict[str, float] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    measured_at: str = ""
    # Per figure (candidate_ms, compile_ms, their loop times, fitness): median and largest
    # |full-stage run / confirmation - 1| over the confirmed nodes' cases; "cv": the timer's
    # median spread within a run (candidate, compile), for scale.
    agreement: dict[str, dict[str, float]] = field(default_factory=dict)
    workers: int = 0                               # evaluator workers whose results the job got
    # Candidates whose code equals an earlier one's: the controller reuses that verdict and
    # spends no evaluation (counted in ``candidates``, not in ``judged``).
    duplicates: int = 0
    # The job's start-up (the reference run and the baselines, computed once per job and
    # worker) over, the pace of the search itself: seconds to the first verdict, and
    # evaluations per minute from the first verdict to the last.
    first_verdict_s: float = 0.0
    steady_evaluations_per_minute: float = 0.0
    # Wall time per evaluation of those started after the first verdict (the first wave waits
    # for the job's reference run and baselines; a long search is made of these).
    steady_eval_s_median: float = 0.0
    steady_eval_s_p95: float = 0.0
    judged: int = 0                                # candidates with a final verdict from the pool
    confirmations: int = 0                         # of ``evaluated``: would-be bests timed again
    evaluations_per_minute: float = 0.0
    # Per stage ("full": a candidate judged; "confirm": a would-be best timed again): how many,
    # wall time per evaluation (median, p95) and the GPU lock held per evaluation (median).
    by_stage: dict[str, dict[str, float]] = field(default_factory=dict)
    # Where a candidate's time goes on its way to a verdict (see ``pipeline``), seconds.
    pipeline_s: dict[str, float] = field(default_factory=dict)
    parallelism: int = 0                           # expansions the job kept in flight

    def markdown(self) -> str:
        lines = [f"# Evaluation throughput: {self.spec} on {self.platform}", "",
                 f"Job {self.job_id} ({self.state}), measured {self.measured_at}. "
                 f"Environment: {', '.join(f'{k} {v}' for k, v in sorted(self.environment.items())) or '-'}.", "",
                 "| figure | value |", "|---|---:|",
                 f"| candidates generated / judged | {self.candidates} / {self.judged} |",
                 f"| candidates with an earlier candidate's code (verdict reused, not evaluated) | {self.duplicates} |",
                 f"| evaluations (confirmation runs of would-be bests) | {self.evaluated} ({self.confirmations}) |",
                 f"| evaluator workers | {self.workers} |",
                 f"| search wall time (first candidate to last verdict) | {self.wall_s:.1f} s |",
                 f"| candidates judged per minute | {self.per_minute:.2f} |",
                 f"| evaluations per minute | {self.evaluations_per_minute:.2f} |",
                 f"| first verdict after (the job's reference run and baselines) | {self.first_verdict_s:.1f} s |",
                 f"| evaluations per minute after the first verdict | {self.steady_evaluations_per_minute:.2f} |",
                 f"| wall time per evaluation started after the first verdict, median / p95 | "
                 f"{self.steady_eval_s_median:.2f} s / {self.steady_eval_s_p95:.2f} s |",
                 f"| wall time per evaluation, median | {self.eval_s_median:.2f} s |",
                 f"| wall time per evaluation, p95 | {self.eval_s_p95:.2f} s |"]
        if self.gpu_busy is not None:
            lines.append(f"| GPU busy (timing candidates and baselines) | {self.gpu_busy:.1%} |")
        if self.by_stage:
            lines += ["", "## By stage", "", "| stage | evaluations | wall time median / p95 | GPU lock held, median |",
                      "|---|---:|---:|---:|"]
            lines += [f"| {stage} | {int(row['evaluations'])} | {row['median_s']:.2f} s / {row['p95_s']:.2f} s | "
                      f"{row['gpu_lock_s']:.2f} s |" for stage, row in self.by_stage.items()]
        if self.agreement:
            lines += ["", "## Timing agreement: full-stage run against its confirmation", "",
                      "| figure | pairs | median difference | largest difference |", "|---|---:|---:|---:|"]
            lines += [f"| {name} | {int(row['pairs'])} | {row['median']:.1%} | {row['max']:.1%} |"
                      for name, row in self.agreement.items()]
        if self.pipeline_s:
            lines += ["", f"## A candidate's way to its verdict ({self.parallelism} expansions in flight)", "",
                      "| step | s |", "|---|---:|"]
            lines += [f"| {name} | {seconds:.2f} |" for name, seconds in self.pipeline_s.items()]
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


def _agreement(reports: list[EvaluationReport]) -> dict[str, dict[str, float]]:
    """How far a confirmed node's two runs lie apart, figure by figure (see ThroughputReport)."""
    by_node: dict[str, dict[str, EvaluationReport]] = {}
    for r in reports:
        by_node.setdefault(r.result.node_id, {})[r.result.stage] = r
    diffs: dict[str, list[float]] = {}
    spread: dict[str, list[float]] = {"cv (candidate, within a run)": [], "cv (compile, within a run)": []}
    for runs in by_node.values():
        if "full" not in runs or "confirm" not in runs:
            continue
        first, second = runs["full"], runs["confirm"]
        for i, (a, b) in enumerate(zip(first.result.cases, second.result.cases, strict=False)):
            for name in ("candidate_ms", "compile_ms", "candidate_loop_ms", "compile_loop_ms", "gpu_fitness",
                         "loop_fitness"):
                x, y = getattr(a, name), getattr(b, name)
                if x > 0 and y > 0:
                    diffs.setdefault(name, []).append(abs(x / y - 1))
            for run in (first, second):
                timing = run.case_timing(i)
                spread["cv (candidate, within a run)"].append(timing.cv)
                if "compile_cv" in timing.extra:
                    spread["cv (compile, within a run)"].append(timing.extra["compile_cv"])
    rows = {name: {"pairs": float(len(v)), "median": statistics.median(v), "max": max(v)}
            for name, v in diffs.items()}
    if rows:
        rows.update({name: {"pairs": float(len(v)), "median": statistics.median(v), "max": max(v)}
                     for name, v in spread.items() if v})
    return rows


def _held(window: list[float]) -> float:
    return window[-1] - window[0] if len(window) >= 2 else 0.0


def _by_stage(reports: list[EvaluationReport]) -> dict[str, dict[str, float]]:
    """Full-stage runs and confirmations apart: a confirmation samples every contender again,
    so the median of the two mixed describes neither."""
    rows: dict[str, dict[str, float]] = {}
    for stage in ("full", "confirm"):
        runs = [r for r in reports if r.result.stage == stage]
        if runs:
            seconds = [r.result.duration_s for r in runs]
            rows[stage] = {"evaluations": float(len(runs)), "median_s": statistics.median(seconds),
                           "p95_s": _quantile(seconds, 0.95),
                           "gpu_lock_s": statistics.median(_held(r.gpu_lock_window) for r in runs)}
    return rows


def summarize(job: job_pb2.Job, reports: list[EvaluationReport], first_candidate_at: float,
              duplicates: int = 0) -> ThroughputReport:
    """The figures of one finished job from its evaluation reports (every run on the pool:
    a node's final one, and the full-stage run a confirmation replaced)."""
    full = [r for r in reports if r.result.stage != "screen"] or reports
    ends = [w[-1] for r in full for w in (r.gpu_lock_window, r.baseline_lock_window) if len(w) >= 2]
    last = max([job.updated_at, *ends])
    wall = max(1e-9, last - first_candidate_at)
    durations = [r.result.duration_s for r in full]
    gpu = [_held(r.gpu_lock_window) + _held(r.baseline_lock_window) for r in full
           if r.gpu_lock_window or r.baseline_lock_window]
    environment = next((dict(r.result.environment) for r in full if r.result.environment), {})
    confirmations = sum(r.result.stage == "confirm" for r in full)
    # A node's final verdict comes from its last run: a confirmed node's full-stage run is work
    # done, not another candidate judged.
    judged = len(full) - confirmations
    finished = sorted(r.finished_at for r in full if r.finished_at > 0)
    steady = 60 * (len(finished) - 1) / (finished[-1] - finished[0]) if len(finished) >= 2 and (
        finished[-1] > finished[0]) else 0.0
    later = [r.result.duration_s for r in full
             if finished and r.finished_at > 0 and r.finished_at - r.result.duration_s >= finished[0]]
    return ThroughputReport(
        spec=job.spec.name, platform=job.platform, job_id=job.job_id, state=job_pb2.JobState.Name(job.state),
        candidates=job.candidates, evaluated=len(full), judged=judged, confirmations=confirmations,
        wall_s=wall, per_minute=60 * judged / wall, evaluations_per_minute=60 * len(full) / wall,
        eval_s_median=statistics.median(durations) if durations else 0.0, eval_s_p95=_quantile(durations, 0.95),
        gpu_busy=(sum(gpu) / wall) if gpu else None,
        phases_median_s=_median_phases([r.phases_s for r in full]),
        candidate_phases_median_s=_median_phases([r.candidate_phases_s for r in full if r.candidate_phases_s]),
        agreement=_agreement(full), by_stage=_by_stage(full),
        workers=len({r.result.worker for r in full if r.result.worker}), duplicates=duplicates,
        first_verdict_s=(finished[0] - first_candidate_at) if finished else 0.0,
        steady_evaluations_per_minute=steady,
        steady_eval_s_median=statistics.median(later) if later else 0.0, steady_eval_s_p95=_quantile(later, 0.95),
        environment={k: v for k, v in environment.items() if k in ("gpu", "torch", "triton", "device", "cpu")},
        measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def _start(report: EvaluationReport) -> float:
    return report.finished_at - report.result.duration_s


def pipeline(created: dict[str, float], screens: dict[str, EvaluationReport], runs: dict[str, EvaluationReport],
             parallelism: int, per_minute: float, since: float = 0.0) -> dict[str, float]:
    """Medians of each step from a candidate's creation to its pool run's verdict, by node id
    (``runs``: the first run on the pool, ``screens``: the screening run where there was one),
    and the mean time an expansion spends before its candidate exists. That last one is
    derived: with ``parallelism`` expansions always in flight, each takes ``parallelism /
    throughput`` from request to verdict (Little's law); less the measured mean from creation
    to verdict, the rest went to retrieval, generation and the controller. A step far larger
    than the pool run is what bounds the search's pace. Only candidates created at ``since`` or
    later count (the steady search, after the first wave waited for the job's start-up), and
    ``per_minute`` is the pool's pace over that time."""
    nodes = [n for n in runs if created.get(n, -1.0) >= since and runs[n].finished_at > 0]
    if not nodes:
        return {}
    steps: dict[str, list[float]] = {"created to screening": [], "screening run": [], "screened to the pool": [],
                                     "created to the pool (not screened)": [], "pool run": []}
    for node in nodes:
        run, screen = runs[node], screens.get(node)
        if screen is not None and screen.finished_at > 0:
            steps["created to screening"].append(max(0.0, _start(screen) - created[node]))
            steps["screening run"].append(screen.result.duration_s)
            steps["screened to the pool"].append(max(0.0, _start(run) - screen.finished_at))
        else:
            steps["created to the pool (not screened)"].append(max(0.0, _start(run) - created[node]))
        steps["pool run"].append(run.result.duration_s)
    rows = {name: statistics.median(values) for name, values in steps.items() if values}
    in_system = statistics.fmean(runs[n].finished_at - created[n] for n in nodes)
    rows["created to verdict, mean"] = in_system
    if per_minute > 0 and parallelism > 0:
        rows["before the candidate exists, mean (derived)"] = max(0.0, 60 * parallelism / per_minute - in_system)
    return rows


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
    # A duplicate's report is its twin's: each evaluation is read once.
    duplicate = [n.decided_by.startswith("dedupe:") for n in nodes]
    keys = dict.fromkeys(key for n, dup in zip(nodes, duplicate, strict=True)
                         if n.eval_report_key and n.verdict != common_pb2.NO_CODE and not dup
                         for key in (n.eval_report_key, n.full_report_key) if key)
    read = {key: EvaluationReport.read(client.artifact(job.job_id, key)) for key in keys}
    first = min((n.created_at for n in nodes), default=job.created_at)
    report = summarize(job, list(read.values()), first, duplicates=sum(duplicate))
    # Each evaluated node's first run on the pool and its screening run, for the pipeline.
    runs = {n.node_id: read[key] for n, dup in zip(nodes, duplicate, strict=True)
            if not dup and (key := n.full_report_key or n.eval_report_key) in read
            and read[key].result.stage != "screen"}
    screens = {n.node_id: EvaluationReport.read(client.artifact(job.job_id, n.screen_report_key))
               for n in nodes if n.node_id in runs and n.screen_report_key}
    report.parallelism = parallelism
    report.pipeline_s = pipeline({n.node_id: n.created_at for n in nodes}, screens, runs, parallelism,
                                 report.steady_evaluations_per_minute, since=first + report.first_verdict_s)
    return report


def write(report: ThroughputReport, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"throughput_{report.spec}_{report.platform}"
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    json_path.write_text(json.dumps(asdict(report), indent=2) + "\n")
    md_path.write_text(report.markdown())
    return json_path, md_path
