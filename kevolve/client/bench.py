"""`kevolve bench`: run the benchmark suite through the JobService and write the report.

One job per suite spec is submitted over gRPC (several in flight), followed by polling
GetJob until it ends, then the best node's evaluation report is read back with
GetArtifact for its per-shape timings. The raw results are saved as JSON first, so a GPU
run's numbers can be committed and re-rendered anywhere (``--from-json``).
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Protocol

import grpc
import typer

from kevolve import specfile
from kevolve.client.cli_common import DEFAULT_RUN_DIR
from kevolve.client.benchreport import (BenchResult, CaseTiming, SpecResult, load_isolated_baselines,
                                        measure_copy_bandwidth_gbs, measurement_settings, write_report)
from kevolve.reports import EvaluationReport
from kevolve.v1 import common_pb2, job_pb2, service_pb2

POLICIES = {"greedy": job_pb2.GREEDY, "mcts": job_pb2.MCTS, "evolutionary": job_pb2.EVOLUTIONARY,
            "random": job_pb2.RANDOM}
TERMINAL = {job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED}
TERMINAL_NAMES = {job_pb2.JobState.Name(state) for state in TERMINAL}
_module_ids = itertools.count()


class JobApi(Protocol):
    """The JobService calls the runner makes (kevolve.client.jobclient.JobClient satisfies it)."""

    def submit(self, spec_path: Path, platform: str, config: job_pb2.JobConfig) -> job_pb2.Job: ...
    def get(self, job_id: str) -> job_pb2.Job: ...
    def cancel(self, job_id: str) -> job_pb2.Job: ...
    def candidates(self, job_id: str) -> list[job_pb2.Candidate]: ...
    def best(self, job_id: str) -> service_pb2.GetBestKernelResponse: ...
    def artifact(self, job_id: str, key: str) -> bytes: ...
    def close(self) -> None: ...


def _listed(suite: Path, deep: bool = False) -> list[Path]:
    """The files a suite names: a folder's ``*.py`` (with ``deep``, its subfolders' too), or the
    paths a ``.txt`` list gives one per line (relative to the list; ``#`` starts a comment)."""
    if suite.is_file():
        lines = (line.split("#", 1)[0].strip() for line in suite.read_text().splitlines())
        return [suite.parent / line for line in lines if line]
    return sorted(suite.rglob("*.py") if deep else suite.glob("*.py"))


def _specs_among(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if path.name.startswith("_"):
            continue
        defines = specfile.outline(path.read_text(), str(path)).defines
        if all(name in defines for name in specfile.REQUIRED):
            found.append(path)
    return found


def discover_specs(suite_dir: Path, only: list[str] | None = None) -> list[Path]:
    """The suite's spec files, sorted: every ``*.py`` that defines Model, get_inputs and get_init_inputs.

    Helpers living beside the specs (random_specs.py) define none of them and are skipped. A
    folder with no spec of its own (bench/corpus, whose levels are subfolders) is searched
    through its subfolders.
    """
    found = _specs_among(_listed(suite_dir))
    if not found and suite_dir.is_dir():
        found = _specs_among(_listed(suite_dir, deep=True))
    if only:
        unknown = set(only) - {p.stem for p in found}
        if unknown:
            raise ValueError(f"no suite spec named {', '.join(sorted(unknown))} in {suite_dir}")
        found = [p for p in found if p.stem in only]
    return found


def spec_cost(path: Path, sizes: dict[str, int] | None = None) -> tuple[int, int]:
    """(minimal bytes moved, FLOPs) of a suite spec at ``sizes``, from its bytes_moved()/flops() helpers.

    This executes the spec's top level (imports and constants only; no tensors are built).
    It is done in-process because suite specs are this repository's own files, not user
    submissions, which are only ever loaded inside the sandbox.
    """
    outline = specfile.outline(path.read_text())
    known = {k: int(v) for k, v in (sizes or {}).items() if k in outline.sizes}
    module = specfile.load_module(path.read_text(), f"_kevolve_bench_cost_{next(_module_ids)}", sizes=known,
                                  filename=str(path))
    if not hasattr(module, "bytes_moved") or not hasattr(module, "flops"):
        return 0, 0
    return int(module.bytes_moved()), int(module.flops())


def suite_table(paths: list[Path], copy_bw_gbs: float | None = None) -> str:
    """The markdown table of bench/suite/README.md: family, sizes, dtypes, bytes moved and FLOPs.

    The family is the spec's module-level ``family`` string.

    Dtypes are read off the inputs that get_inputs() builds at the screening sizes (cheap),
    bytes and FLOPs from the spec's own helpers at the production sizes. With
    ``copy_bw_gbs``, a column gives the bandwidth floor: bytes / copy bandwidth.
    """
    import torch

    head = ("| family | spec | shapes (production; extra cases) | input dtypes | bytes moved | FLOPs "
            "| FLOP/byte |")
    sep = "|---|---|---|---|---|---|---|"
    if copy_bw_gbs:
        head, sep = head + f" floor us @ {copy_bw_gbs:.0f} GB/s |", sep + "---|"
    lines = [head, sep]
    for path in paths:
        outline = specfile.outline(path.read_text())
        module = specfile.load_module(path.read_text(), f"_kevolve_bench_table_{next(_module_ids)}",
                                      sizes=outline.cpu_sizes, filename=str(path))
        torch.manual_seed(0)
        dtypes = sorted({str(t.dtype).removeprefix("torch.") for t in module.get_inputs()})
        moved, flops = spec_cost(path)
        sizes = ", ".join(f"{k}={v}" for k, v in outline.sizes.items())
        extra = "; ".join(f"{c.get('name')}: " + ", ".join(f"{k}={v}" for k, v in dict(c["sizes"]).items())
                          for c in outline.test_cases if isinstance(c.get("sizes"), dict))
        shapes = sizes + (f" ({extra})" if extra else "")
        row = (f"| {getattr(module, 'family', '')} | `{path.stem}` | {shapes} | {', '.join(dtypes)} "
               f"| {moved / 1e6:.1f} MB | {flops / 1e9:.3g} G | {flops / moved:.3g} |")
        if copy_bw_gbs:
            row += f" {moved / (copy_bw_gbs * 1e9) * 1e6:.1f} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def cases_from_report(report: EvaluationReport) -> tuple[list[CaseTiming], bool, str]:
    """The per-shape timings of an evaluation report, speed_measured, device.

    Bytes and FLOPs are what the spec declares (its bytes_moved() and flops(), which the
    evaluator runs in its sandbox: an embedding bag reads the gathered rows, not the table;
    weights count once); where a spec declares no bytes, what its inputs and outputs weigh.
    The machine facts themselves are read with :func:`environment_of`."""
    result = report.result
    cases = []
    for index, c in enumerate(result.cases):
        extra = report.case_timing(index).extra
        cases.append(CaseTiming(name=c.name, sizes=dict(c.sizes), passed=c.passed, candidate_ms=c.candidate_ms,
                                eager_ms=c.eager_ms, compile_ms=c.compile_ms,
                                bytes_moved=c.declared_bytes or c.bytes_moved, flops=c.flops, simulated=c.simulated,
                                candidate_host_ms=float(extra.get("candidate_host_ms", 0.0)),
                                compile_host_ms=float(extra.get("compile_host_ms", 0.0)),
                                candidate_loop_ms=c.candidate_loop_ms, compile_loop_ms=c.compile_loop_ms))
    env = result.environment
    return cases, result.speed_measured, str(env.get("gpu", env.get("device", "")))


def environment_of(report: EvaluationReport) -> dict[str, str]:
    """The machine facts an evaluation report carries (GPU, driver, clocks, library versions)."""
    return dict(report.result.environment)


def _same_sizes(spec_sizes: dict[str, int], case: CaseTiming) -> bool:
    return bool(case.sizes) and all(spec_sizes.get(k) == v for k, v in case.sizes.items())


def is_production(path: Path, case: CaseTiming | None) -> bool:
    """Whether a timed case has exactly the spec's own (production) sizes."""
    return case is not None and _same_sizes(specfile.outline(path.read_text()).sizes, case)


def mark_production(result: BenchResult) -> None:
    """Set each spec's main_is_production from the suite's spec files, where they can be read."""
    for spec in result.specs:
        path = Path(result.suite) / f"{spec.spec}.py"
        if spec.cases and path.exists():
            spec.main_is_production = is_production(path, spec.main())


def _main_case(path: Path, cases: list[CaseTiming]) -> str:
    """The production shape: the case whose sizes are the spec's own constants, else the first case."""
    outline = specfile.outline(path.read_text())
    for case in cases:
        if _same_sizes(outline.sizes, case):
            return case.name
    test_names = {str(c.get("name")) for c in outline.test_cases}
    for case in cases:
        if case.name not in test_names:
            return case.name
    return cases[0].name if cases else ""


def failure_summary(nodes: list[job_pb2.Candidate], limit: int = 160) -> str:
    """Why a job found no correct kernel, in one line: verdict counts and the commonest reason."""
    if not nodes:
        return "no candidates"
    verdicts = Counter("not judged when the job ended" if n.verdict == common_pb2.VERDICT_UNSPECIFIED
                       else common_pb2.Verdict.Name(n.verdict) for n in nodes)
    counts = ", ".join(f"{count} {name}" for name, count in verdicts.most_common())
    reasons = Counter(n.reason.strip() for n in nodes if n.reason.strip())
    if not reasons:
        return counts
    reason = reasons.most_common(1)[0][0]
    reason = reason if len(reason) <= limit else reason[: limit - 3] + "..."
    return f"{counts}; most often: {reason}"


def _device_seconds(api: JobApi, job: job_pb2.Job, nodes: list[job_pb2.Candidate]) -> float:
    """Evaluation time spent on the target platform's pool, summed over the job's nodes.

    Time a candidate spent queued for the GPU lock (while another one was timed) is left out:
    it was counted already, as the other candidate's time."""
    total = 0.0
    for node in nodes:
        if not node.eval_report_key:
            continue
        try:
            report = EvaluationReport.read(api.artifact(job.job_id, node.eval_report_key))
        except (ValueError, RuntimeError):
            continue  # an unreadable report costs the total its time, not the whole bench
        if (report.result.platform or job.platform) == job.platform:
            total += report.device_seconds()
    return total


# A bench submits many specs at once: a submit the controller turns away for a limit of the
# moment (the tenant's rate, its spec probes running, its open jobs) is retried after the
# wait the controller names ("retry in 2.0s"), else after RETRY_S, for up to this long. A
# 48-job bench on a 4-GPU host lost 21 of 71 specs to "2 spec probes of tenant 'default' are
# running ...; retry when they end" when only a named wait was retried.
SUBMIT_PATIENCE_S = 600.0
RETRY_S = 2.0
_RETRY_IN = re.compile(r"retry in ([0-9.]+)s")


def _submit(api: JobApi, path: Path, platform: str, config: job_pb2.JobConfig) -> job_pb2.Job:
    deadline = time.monotonic() + SUBMIT_PATIENCE_S
    while True:
        try:
            return api.submit(path, platform, config)
        except RuntimeError as exc:
            code = getattr(exc, "code", None)
            if code != grpc.StatusCode.RESOURCE_EXHAUSTED or "retry" not in str(exc) \
                    or time.monotonic() > deadline:
                raise
            wait = _RETRY_IN.search(str(exc))
            time.sleep(min(30.0, float(wait.group(1)) + 0.1) if wait else RETRY_S)


def run_one(api: JobApi, path: Path, platform: str, config: job_pb2.JobConfig, poll_s: float = 2.0,
            job_timeout_s: float = 0.0, on_progress: Callable[[str], None] | None = None
            ) -> tuple[SpecResult, dict[str, str]]:
    """Submit one spec, follow it to its end, and collect its result and the machine facts its
    best evaluation recorded. Never raises for a job's failure."""
    spec = SpecResult(spec=path.stem)
    env: dict[str, str] = {}
    started = time.monotonic()
    try:
        job = _submit(api, path, platform, config)
        spec.job_id = job.job_id
        while job.state not in TERMINAL:
            if job_timeout_s and time.monotonic() - started > job_timeout_s:
                job = api.cancel(job.job_id)
                spec.error = f"cancelled by the bench runner after {job_timeout_s:.0f} s"
                break
            time.sleep(poll_s)
            job = api.get(job.job_id)
        spec.wall_s = time.monotonic() - started
        spec.state = job_pb2.JobState.Name(job.state)
        spec.end_reason = job.end_reason
        spec.candidates, spec.evaluated, spec.passed = job.candidates, job.evaluated, job.passed
        spec.prompt_tokens, spec.completion_tokens = job.usage.prompt_tokens, job.usage.completion_tokens
        spec.cost_usd = job.usage.cost_usd
        spec.best_node_id = job.best_node_id
        if job.best_node_id:
            best = api.best(job.job_id).candidate
            spec.best_verdict = common_pb2.Verdict.Name(best.verdict)
            spec.correct = best.verdict == common_pb2.PASSED and job.state == job_pb2.SUCCEEDED
            if best.eval_report_key:
                report = EvaluationReport.read(api.artifact(job.job_id, best.eval_report_key))
                spec.cases, spec.speed_measured, _ = cases_from_report(report)
                spec.precision, spec.tf32_allowed = report.result.dot_precision, report.result.tf32_allowed
                env = environment_of(report)
                spec.main_case = _main_case(path, spec.cases)
                spec.main_is_production = is_production(path, spec.main())
        spec.speed_measured = spec.speed_measured and job.fitness_is_speed
        nodes = api.candidates(job.job_id)
        spec.device_s = _device_seconds(api, job, nodes)
        if not spec.correct:
            spec.failures = failure_summary(nodes)
    except (RuntimeError, ValueError, OSError) as exc:  # ClientError is a RuntimeError
        spec.error = spec.error or str(exc)
        spec.state = spec.state or "NOT_RUN"
        spec.wall_s = spec.wall_s or time.monotonic() - started
    if on_progress:
        on_progress(f"{spec.spec}: {spec.state} {spec.best_verdict or ''} {spec.error}".strip())
    return spec, env


def _carry_over(result: BenchResult, earlier: Path, paths: list[Path],
                on_progress: Callable[[str], None] | None) -> list[Path]:
    """Move the specs that ended in ``earlier`` into ``result``; return the paths left to run.

    A spec the runner could not submit or follow (state NOT_RUN) or cancelled on its
    timeout is run again; one that ended, passed or failed, keeps its result."""
    if not earlier.is_file():
        return paths
    before = BenchResult.from_json(earlier.read_text())
    if before.platform != result.platform:
        raise ValueError(f"{earlier} is a run on {before.platform}, not {result.platform}: "
                         "resume a run of the same platform")
    # Speeds found under another budget or policy are another search's: only a cpu run
    # (correctness alone) goes on at another budget, each kept spec keeping its own.
    checked = ("policy",) + (() if result.platform == "cpu" else ("budget",))
    for attr in checked:
        if getattr(before, attr) != getattr(result, attr):
            raise ValueError(f"{earlier} ran with {attr} {getattr(before, attr)!r}, this run with "
                             f"{getattr(result, attr)!r}: resume with the same {attr}")
    wanted = {p.stem for p in paths}
    kept = [s.with_budget(before.budget) for s in before.specs if s.spec in wanted and s.state in TERMINAL_NAMES
            and "cancelled by the bench runner" not in s.error]
    result.specs.extend(kept)
    result.started_at, result.environment, result.device = before.started_at, before.environment, before.device
    done = {s.spec for s in kept}
    if on_progress:
        on_progress(f"resuming {earlier}: {len(done)} spec(s) kept, {len(paths) - len(done)} to run")
    return [p for p in paths if p.stem not in done]


def run_bench(suite_dir: Path, platform: str, budget: int, out_dir: Path, grpc_target: str,
              token: str | None = None, policy: str = "greedy", parallel_jobs: int = 4, parallelism: int = 2,
              seed: int = 1, only: list[str] | None = None, wall_clock_s: float = 0.0,
              copy_bw_gbs: float | None = None,
              peak_tflops: float | None = None, job_timeout_s: float = 0.0, poll_s: float = 2.0,
              baselines: Path | None = None, stem: str | None = None,
              api_factory: Callable[[str, str | None], JobApi] | None = None,
              on_progress: Callable[[str], None] | None = None, resume: bool = False) -> BenchResult:
    """Run every suite spec as a job on ``platform``; write suite_<platform>.json/.md/.html (or
    ``<stem>.*``) to out_dir.

    ``copy_bw_gbs``: the device's copy bandwidth for the bandwidth fractions; when None on a
    GPU platform and this machine has a GPU, it is measured here. ``peak_tflops``: peak
    FLOP/s for compute-bound specs (None: no FLOP/s fractions). ``api_factory`` builds the
    gRPC client (tests pass a fake). ``resume``: keep the specs that ended in an earlier run's
    report of the same name (out_dir/<stem>.json) and run only the others, so a long run that
    was stopped goes on where it stopped.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}")
    paths = discover_specs(suite_dir, only)
    if not paths:
        raise ValueError(f"no specs in {suite_dir}")
    if copy_bw_gbs is None and platform != "cpu":
        copy_bw_gbs = measure_copy_bandwidth_gbs()
    if api_factory is None:
        from kevolve.client.jobclient import JobClient

        api_factory = JobClient
    config = job_pb2.JobConfig(budget=budget, policy=POLICIES[policy], parallelism=parallelism, seed=seed,
                               wall_clock_s=wall_clock_s)
    result = BenchResult(platform=platform, suite=str(suite_dir), budget=budget, policy=policy,
                         started_at=time.time(), copy_bw_gbs=copy_bw_gbs, peak_tflops=peak_tflops,
                         settings=measurement_settings(os.environ))
    attach_baselines(result, baselines)
    if resume:
        paths = _carry_over(result, out_dir / f"{stem or f'suite_{platform}'}.json", paths, on_progress)
    api = api_factory(grpc_target, token)
    done = threading.Lock()

    def one(path: Path) -> None:
        spec, env = run_one(api, path, platform, config, poll_s, job_timeout_s, on_progress)
        spec.budget = budget
        with done:
            # The report is rewritten as each spec ends: a run cut short keeps every spec
            # that finished.
            result.specs.append(spec)
            result.specs.sort(key=lambda s: s.spec)
            if env and not result.environment:
                result.environment = env
                result.device = env.get("gpu", env.get("device", ""))
            result.finished_at = time.time()
            write_report(result, out_dir, stem)

    try:
        with ThreadPoolExecutor(max_workers=max(1, parallel_jobs)) as pool:
            list(pool.map(one, paths))
    finally:
        api.close()
    result.finished_at = time.time()
    write_report(result, out_dir, stem)
    return result


def attach_baselines(result: BenchResult, baselines: Path | None) -> None:
    """Give the report torch.compile times measured alone (a suite_baselines_*.json), if named."""
    if baselines is not None:
        result.isolated_compile_ms, result.isolated_source = load_isolated_baselines(baselines), baselines.name


def render_from_json(json_paths: Path | list[Path], out_dir: Path | None = None,
                     copy_bw_gbs: float | None = None, peak_tflops: float | None = None,
                     stem: str | None = None, baselines: Path | None = None) -> BenchResult:
    """Rebuild the markdown/HTML report from saved results JSON (optionally with new roofline numbers).

    Several files (runs of parts of one suite) merge into one report;
    a spec present in more than one keeps its result from the last file named."""
    paths = [json_paths] if isinstance(json_paths, Path) else list(json_paths)
    if not paths:
        raise ValueError("no results JSON to render")
    runs = [BenchResult.from_json(p.read_text()) for p in paths]
    result = runs[0].merged(*runs[1:]) if len(runs) > 1 else runs[0]
    mark_production(result)
    if copy_bw_gbs is not None:
        result.copy_bw_gbs = copy_bw_gbs
    if peak_tflops is not None:
        result.peak_tflops = peak_tflops
    attach_baselines(result, baselines)
    write_report(result, out_dir or paths[0].parent, stem=stem or paths[0].stem)
    return result


def register(app: typer.Typer) -> None:
    """Add the `bench` command to the kevolve CLI (called by kevolve/client/main.py)."""

    @app.command()
    def bench(suite: Annotated[Path, typer.Argument(help="folder of specs (or of folders of specs), or a .txt list of spec paths")] = Path("bench/suite"),
              platform: str = "cpu", budget: int = 16,
              policy: Annotated[str, typer.Option(help="greedy|mcts|evolutionary|random")] = "greedy",
              parallel_jobs: Annotated[int, typer.Option(help="jobs in flight at once")] = 4,
              out: Annotated[Path | None, typer.Option(
                  "--out", help="report folder (default: RUN_DIR/bench for a run, so committed reports are "
                                "never overwritten; the JSON's folder for a re-render)")] = None,
              resume: Annotated[bool, typer.Option(
                  "--resume", help="keep the specs that ended in OUT/STEM.json and run only the rest")] = False,
              only: Annotated[list[str] | None, typer.Option("--only", help="run only these specs")] = None,
              copy_bw_gbs: Annotated[float | None, typer.Option(help="device copy bandwidth, GB/s")] = None,
              peak_tflops: Annotated[float | None, typer.Option(help="peak TFLOP/s (compute-bound)")] = None,
              job_timeout_s: Annotated[float, typer.Option(help="cancel a job after this (0 = never)")] = 0.0,
              wall_clock_s: Annotated[float, typer.Option(
                  help="each job's own wall-clock budget: it ends normally, keeping its best (0 = none)")] = 0.0,
              parallelism: Annotated[int, typer.Option(help="expansions in flight per job")] = 2,
              from_json: Annotated[list[Path] | None, typer.Option(
                  "--from-json", help="re-render a saved run; repeat to merge runs of parts of a suite")] = None,
              stem: Annotated[str | None, typer.Option(help="report file name (default suite_<platform>, or the "
                                                             "first JSON's name for a re-render)")] = None,
              baselines: Annotated[Path | None, typer.Option(
                  help="suite_baselines_*.json: torch.compile measured alone; kernels are credited with "
                       "the smaller speedup")] = None,
              target: Annotated[str | None, typer.Option("--target", help="controller HOST:PORT")] = None,
              token: Annotated[str | None, typer.Option(envvar="KEVOLVE_TOKEN", help="API token")] = None,
              run_dir: Annotated[Path, typer.Option("--run-dir", envvar="KEVOLVE_RUN_DIR")] = DEFAULT_RUN_DIR,
              ) -> None:
        """Run the benchmark suite (one job per spec) and write a markdown + HTML report."""
        from kevolve.client.jobclient import ClientError, resolve_target

        try:
            if from_json:
                result = render_from_json(list(from_json), out,
                                          copy_bw_gbs, peak_tflops, stem, baselines)
                typer.echo(f"re-rendered {len(result.specs)} spec(s) from {', '.join(map(str, from_json))}")
                return
            out = out or run_dir / "bench"
            result = run_bench(suite, platform, budget, out, resolve_target(target, run_dir), token=token,
                               policy=policy, parallel_jobs=parallel_jobs, parallelism=parallelism, only=only,
                               wall_clock_s=wall_clock_s, copy_bw_gbs=copy_bw_gbs, baselines=baselines,
                               peak_tflops=peak_tflops, job_timeout_s=job_timeout_s, stem=stem,
                               on_progress=typer.echo, resume=resume)
        except (ClientError, ValueError, OSError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        correct = sum(s.correct for s in result.specs)
        typer.echo(f"{correct}/{len(result.specs)} specs correct; report in {out}/{stem or f'suite_{platform}'}.md/.html")
