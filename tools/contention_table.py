"""Did other candidates' GPU work overlap a candidate's timing, and did torch.compile's time move with it?

A cuda pool prepares several candidates at once and times one at a time under the GPU lock,
but the other candidates' correctness trials, timing preparation and re-checks still run on
the same GPU meanwhile (from their own processes). The three contenders of one timing are
sampled in turn, so such work should not favour the kernel; it could still inflate all three,
and with them the in-run torch.compile time against the one measured alone. This places every
cuda evaluation of a run on one clock (the evaluator log says when each ended, its report's
``phases_s`` what came before, in order) and prints per spec how much foreign GPU work its
timing windows overlapped (in candidates: 1.0 = one other candidate's GPU phase throughout)
and the ratio of torch.compile's in-run GPU time to its isolated one, then both by bucket.

    python3 tools/contention_table.py RUN/suite_cuda.json RUN/logs.tgz \
        --baselines bench/results/suite_baselines_nvidia_h100_80gb_hbm3.json > table.md

A foreign GPU phase is the tail of an evaluation's ``candidate_correctness`` phase as long as
its candidate process's ``correctness_trials`` and ``prepare_timing`` (the process reaches
the wait for the lock right after them), and its ``candidate_recheck`` phase.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from kevolve.client.benchreport import load_isolated_baselines  # noqa: E402
from runlogs import read_run_logs  # noqa: E402

EVALUATED = re.compile(r"^(\S+?)Z? \[info\s*\] evaluated .*\bnode=(\S+)")


@dataclass
class Evaluation:
    node: str
    spec: str
    timing: tuple[float, float]
    gpu: list[tuple[float, float]] = field(default_factory=list)
    compile_ratio: dict[str, float] = field(default_factory=dict)  # case -> in-run / alone


def _ends(evaluator_log: str) -> dict[str, float]:
    """node -> epoch seconds its evaluation ended, from the cuda evaluator's log."""
    ends = {}
    for line in evaluator_log.splitlines():
        if m := EVALUATED.match(line):
            ends[m.group(2)] = datetime.fromisoformat(m.group(1)).replace(tzinfo=timezone.utc).timestamp()
    return ends


def evaluations(suite: dict[str, Any], logs: Path, alone: dict[str, float]) -> list[Evaluation]:
    """The run's cuda evaluations on one clock; ``alone``: "spec/case" -> isolated torch.compile ms."""
    job_spec = {s["job_id"]: s["spec"] for s in suite["specs"]}
    run = read_run_logs(logs)
    ends = _ends(run.logs.get("evaluator-cuda.log", ""))
    out: list[Evaluation] = []
    for report in run.reports:
        result = report.result
        phases = report.phases_s
        node = result.node_id
        if result.platform != "cuda" or node not in ends or "candidate_timing" not in phases:
            continue
        at = ends[node] - sum(phases.values())
        span: dict[str, tuple[float, float]] = {}
        for name, seconds in phases.items():
            span[name] = (at, at + seconds)
            at += seconds
        child = report.candidate_phases_s
        gpu = []
        if "candidate_correctness" in span:
            end = span["candidate_correctness"][1]
            gpu.append((end - child.get("correctness_trials", 0.0) - child.get("prepare_timing", 0.0), end))
        if "candidate_recheck" in span:
            gpu.append(span["candidate_recheck"])
        ev = Evaluation(node, job_spec.get(result.job_id, "?"), span["candidate_timing"], gpu)
        cases = report.plan.cases if report.plan is not None else []
        for index, timing in report.timing.items():
            case = cases[int(index)].name if int(index) < len(cases) else index
            base = alone.get(f"{ev.spec}/{case}", 0.0)
            if base > 0 and timing.compile_ms > 0:
                ev.compile_ratio[case] = timing.compile_ms / base
        out.append(ev)
    return out


def overlap(ev: Evaluation, others: list[Evaluation]) -> float:
    """Foreign GPU phases during ``ev``'s timing window, in candidates (seconds / window)."""
    a, b = ev.timing
    busy = sum(max(0.0, min(b, hi) - max(a, lo)) for o in others if o.node != ev.node for lo, hi in o.gpu)
    return busy / max(b - a, 1e-9)


def _bucket_line(name: str, ratios: list[float]) -> str:
    if not ratios:
        return f"| {name} | 0 | – | – | – |"
    return (f"| {name} | {len(ratios)} | {statistics.median(ratios):.3f} | {max(ratios):.2f} | "
            f"{sum(r > 1.05 for r in ratios) / len(ratios):.0%} |")


def render(evs: list[Evaluation]) -> str:
    pairs = [(overlap(ev, evs), ratio, ev.spec) for ev in evs for ratio in ev.compile_ratio.values()]
    by_spec: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for load, ratio, spec in pairs:
        by_spec[spec].append((load, ratio))
    lines = ["| spec | timed cases | foreign GPU load (median, in candidates) | torch.compile in run / alone "
             "(median) | max |", "|---|---|---|---|---|"]
    for spec, rows in sorted(by_spec.items()):
        lines.append(f"| `{spec}` | {len(rows)} | {statistics.median(r[0] for r in rows):.1f} | "
                     f"{statistics.median(r[1] for r in rows):.3f} | {max(r[1] for r in rows):.2f} |")
    lines += ["", "| foreign GPU load during the timing window | timed cases | torch.compile in run / alone (median) "
              "| max | share > 1.05 |", "|---|---|---|---|---|",
              _bucket_line("none", [r for load, r, _ in pairs if load == 0]),
              _bucket_line("under one candidate", [r for load, r, _ in pairs if 0 < load < 1]),
              _bucket_line("one to three", [r for load, r, _ in pairs if 1 <= load < 3]),
              _bucket_line("three or more", [r for load, r, _ in pairs if load >= 3])]
    if len(pairs) > 2:
        xs, ys = [p[0] for p in pairs], [math.log(p[1]) for p in pairs]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
        if sxx > 0 and syy > 0:
            lines += ["", f"Correlation of the load with log(in run / alone) over {len(pairs)} timed cases: "
                          f"{sxy / math.sqrt(sxx * syy):+.2f}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite_json", type=Path)
    parser.add_argument("logs", type=Path, help="the run's logs.tgz (evaluation reports and evaluator log)")
    parser.add_argument("--baselines", type=Path, required=True)
    args = parser.parse_args()
    evs = evaluations(json.loads(args.suite_json.read_text()), args.logs, load_isolated_baselines(args.baselines))
    print(render(evs), end="")


if __name__ == "__main__":
    main()
