"""One-shot evaluation: exactly the checks a job uses, on local files, verdict printed.

python -m services.evaluator eval SPEC.py CANDIDATE.py --platform cpu|cuda [--json] [--cpu-size NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kevolve.config import CommonSettings
from kevolve.platforms import UnknownPlatform, get_platform
from kevolve.reports import EvaluationReport
from kevolve.v1 import common_pb2

from .config import EvaluatorSettings
from .harness import Harness
from .plan import EvalJob


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m services.evaluator eval",
        description="Evaluate one candidate against a spec with the evaluator's checks.",
    )
    p.add_argument("spec", type=Path, help="KernelBench-format spec (Model, get_inputs, get_init_inputs)")
    p.add_argument("candidate", type=Path, help="candidate source defining ModelNew")
    p.add_argument("--platform", default="cpu", help="cpu, cuda, mtia-sim, ... (kb/platforms.toml)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument(
        "--seed", type=int, default=0, help="base of the trial seeds (default: a secret random one)"
    )
    p.add_argument("--trials", type=int, default=5)
    p.add_argument(
        "--timeout", type=float, default=0.0, help="seconds for the candidate run (default: settings)"
    )
    p.add_argument("--atol", type=float, default=0.0)
    p.add_argument("--rtol", type=float, default=0.0)
    p.add_argument("--cpu-size", action="append", default=[], metavar="NAME=VALUE",
                   help="a size constant's value on interpreter platforms (repeatable; default: the spec's cpu_shapes)")
    return p


def _sizes(pairs: list[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if not name.strip() or not value.strip().isdigit() or int(value) <= 0:
            raise ValueError(f"--cpu-size {pair!r}: expected NAME=POSITIVE_INTEGER")
        sizes[name.strip()] = int(value)
    return sizes


def _table(console: Console, report: EvaluationReport) -> None:
    result = report.result
    passed = result.verdict == common_pb2.PASSED
    colour = "green" if passed else "red"
    console.print(
        f"[bold {colour}]{common_pb2.Verdict.Name(result.verdict)}[/]  decided by [bold]{result.decided_by}[/]"
    )
    console.print(result.reason)
    checks = Table(title="checks")
    for col in ("check", "passed", "detail"):
        checks.add_column(col)
    for c in report.checks:
        checks.add_row(c.name, "yes" if c.passed else "no", c.detail[:200])
    console.print(checks)
    if result.cases:
        table = Table(title="cases")
        for col in (
            "case",
            "sizes",
            "max abs err",
            "candidate ms",
            "eager ms",
            "compile ms",
            "cv",
            "fitness",
        ):
            table.add_column(col)
        for c in result.cases:
            table.add_row(
                c.name,
                json.dumps({k: str(v) for k, v in c.sizes.items()}),
                f"{c.max_abs_error:.3g}",
                f"{c.candidate_ms:.4g}",
                f"{c.eager_ms:.4g}",
                f"{c.compile_ms:.4g}",
                f"{c.candidate_cv:.3f}",
                f"{c.fitness:.3g}",
            )
        console.print(table)
    console.print(f"sandbox: {result.sandbox}")
    for label, phases in (("worker phases", report.phases_s), ("candidate process phases", report.candidate_phases_s)):
        if phases:
            console.print(f"{label}: " + ", ".join(f"{k} {v:.2f}s" for k, v in phases.items()))
    if not passed and report.traceback:
        console.print(report.traceback[-3000:], markup=False)


def eval_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    common = CommonSettings()
    try:
        platform = get_platform(common.kb_dir, args.platform)
        spec, candidate = args.spec.read_text(), args.candidate.read_text()
        cpu_sizes = _sizes(args.cpu_size)
    except (UnknownPlatform, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if platform.runner != "cuda":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    with tempfile.TemporaryDirectory(prefix="kevolve-eval-") as scratch:
        settings = EvaluatorSettings(platform=platform.name, scratch_dir=Path(scratch))
        # One candidate: a fresh process is as fast as starting a warm pool.
        harness = Harness(settings.model_copy(update={"warm_pool": False}), common.kb_dir)
        outcome = harness.evaluate(
            EvalJob(
                spec_source=spec,
                candidate_source=candidate,
                platform=platform,
                trials=max(5, args.trials),
                seed=args.seed,
                atol=args.atol,
                rtol=args.rtol,
                timeout_s=args.timeout,
                cpu_sizes=cpu_sizes,
            )
        )
    if args.json:
        print(outcome.evaluation.to_json().decode())
    else:
        _table(Console(), outcome.evaluation)
    return 0 if outcome.result.verdict == common_pb2.PASSED else 1
