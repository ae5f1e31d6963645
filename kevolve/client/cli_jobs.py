"""`kevolve` commands over the job API: submit (every JobConfig field), list, status, watch,
candidates, node, approve, best, cancel, export, report."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kevolve.client.cli_common import (DEFAULT_RUN_DIR, POLICIES, Output, OutputOption, PlatformOption, Policy,
                                       RunDir, Target, app, as_dict, client, console, fail, platform_name, print_json,
                                       sizes, source)
from kevolve.client.jobclient import ClientError, JobClient, follow_events, resolve_target
from kevolve.nodeids import node_name
from kevolve.v1 import common_pb2, job_pb2

FINAL_AT_CREATION = (common_pb2.NO_CODE,)  # verdicts a node has from its creation on


def job_table(job: job_pb2.Job) -> Table:
    table = Table(show_header=False, box=None)
    unit = job.fitness_unit or ("speedup vs torch.compile" if job.fitness_is_speed else "correctness only")
    best = (f"{node_name(job.best_node_id, job.job_id)}  fitness {job.best_fitness:.3f} ({unit})"
            if job.best_node_id else "none yet")
    rows = [
        ("job", job.job_id), ("spec", job.spec.name), ("platform", job.platform),
        ("state", job_pb2.JobState.Name(job.state)), ("end reason", job.end_reason or "-"),
        ("candidates", f"{job.candidates} created, {job.evaluated} evaluated, {job.passed} passed"),
        ("best", best),
        ("LLM usage", f"{job.usage.prompt_tokens + job.usage.completion_tokens} tokens, ${job.usage.cost_usd:.4f}"),
    ]
    if job.spec.cpu_sizes:  # the spec's cpu_shapes, --cpu-size, or the sizes derived at submit
        rows.insert(3, ("screening sizes", ", ".join(f"{k}={v}" for k, v in sorted(job.spec.cpu_sizes.items()))))
    for key, value in rows:
        table.add_row(f"[bold]{key}[/]", value)
    return table


def require_success(job: job_pb2.Job) -> None:
    """Exit 1, saying how the job ended, unless it succeeded (scripts read the exit status)."""
    if job.state != job_pb2.SUCCEEDED:
        raise fail(RuntimeError(f"job {job.job_id} ended {job_pb2.JobState.Name(job.state)}: "
                                f"{job.end_reason or 'no reason given'}"))


def candidate_line(c: job_pb2.Candidate, job_id: str) -> str:
    verdict = common_pb2.Verdict.Name(c.verdict)
    why = c.reason[:80] if c.verdict != common_pb2.PASSED else ""
    if c.decided_by.startswith("dedupe:"):
        why = f"same code as {node_name(c.decided_by.removeprefix('dedupe:'), job_id)}"
    return f"  node {node_name(c.node_id, job_id):<5} gen {c.generation} {verdict:<16} fitness {c.fitness:.3f}  {why}"


def follow(connect: Callable[[], JobClient], job_id: str, budget: int) -> job_pb2.Job:
    """Live progress until the job ends: a bar of candidates evaluated, the best fitness once a
    candidate passed, and a line per candidate that got its verdict (NO_CODE and duplicates
    too). Survives restarts of the controller: ``connect`` is called again to reach it."""
    job: job_pb2.Job | None = None
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("{task.fields[best]}"), TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task("evaluated", total=max(budget, 1), best="no candidate passed yet")

        def outage(message: str) -> None:
            progress.console.print(f"  [yellow]{escape(message)}[/]")

        for event in follow_events(connect, job_id, on_outage=outage):
            job = event.job
            unit = "x" if job.fitness_is_speed else " (pass)"
            best = f"best fitness {job.best_fitness:.3f}{unit}" if job.passed else "no candidate passed yet"
            progress.update(task, completed=job.evaluated, total=max(budget, job.candidates), best=best)
            if not event.HasField("candidate"):
                continue
            c = event.candidate
            at_creation = event.kind == "candidate" and (c.verdict in FINAL_AT_CREATION
                                                         or c.decided_by.startswith("dedupe:"))
            if event.kind == "evaluated" or at_creation:
                progress.console.print(candidate_line(c, job_id))
    assert job is not None   # follow_events returns only after the job's last event
    return job


def _config(budget: int, policy: Policy, parallelism: int, seed: int, reuse: bool, wall_clock_s: float,
            max_tokens: int, max_cost_usd: float, patience: int, target_speedup: float, uct_c: float, islands: int,
            migration_interval: int, models: list[str], skip_screening: bool,
            cuda_graphs: bool = False, allow_tf32: bool = False) -> job_pb2.JobConfig:
    return job_pb2.JobConfig(
        budget=budget, policy=POLICIES[policy], parallelism=parallelism, seed=seed, no_reuse=not reuse,
        wall_clock_s=wall_clock_s, max_tokens=max_tokens, max_cost_usd=max_cost_usd, patience=patience,
        target_speedup=target_speedup, uct_c=uct_c, islands=islands, migration_interval=migration_interval,
        models=models, skip_screening=skip_screening, cuda_graphs=cuda_graphs,
        allow_tf32=allow_tf32)


@app.command()
def submit(
    spec: Annotated[Path, typer.Argument(help="a spec in KernelBench's format (Model, get_inputs, get_init_inputs)")],
    platform: PlatformOption = "cpu",  # type: ignore[assignment]
    budget: Annotated[int, typer.Option(help="candidates to generate and evaluate at most")] = 8,
    policy: Annotated[Policy, typer.Option(help="how the next candidate's parent is chosen")] = Policy.greedy,
    parallelism: Annotated[int, typer.Option(help="expansions in flight at once")] = 2,
    seed: Annotated[int, typer.Option(help="makes the search and the trial inputs reproducible")] = 1,
    reuse: Annotated[bool, typer.Option("--reuse/--no-reuse", help="start from the best kernels of earlier jobs "
                                                                   "on the same spec")] = True,
    wall_clock_s: Annotated[float, typer.Option(help="end the job after this many seconds (0 = no limit)")] = 0.0,
    max_tokens: Annotated[int, typer.Option(help="end the job once its LLM calls used this many tokens "
                                                 "(0 = no limit)")] = 0,
    max_cost_usd: Annotated[float, typer.Option(help="end the job once its LLM calls cost this much "
                                                     "(0 = no limit)")] = 0.0,
    patience: Annotated[int, typer.Option(help="end the job after this many evaluations without a better "
                                               "kernel (0 = off)")] = 0,
    target_speedup: Annotated[float, typer.Option(help="end the job once a kernel reaches this fitness "
                                                       "(0 = off)")] = 0.0,
    uct_c: Annotated[float, typer.Option(help="MCTS exploration constant (0 = the policy's default)")] = 0.0,
    islands: Annotated[int, typer.Option(help="evolutionary: islands (0 = default)")] = 0,
    migration_interval: Annotated[int, typer.Option(help="evolutionary: evaluations between migrations "
                                                         "(0 = default)")] = 0,
    model: Annotated[list[str] | None, typer.Option("--model", help="an LLM to generate with; repeat for several "
                                                                    "(a bandit picks among them)")] = None,
    skip_screening: Annotated[bool, typer.Option("--skip-screening", help="GPU targets: evaluate on the GPU "
                                                                          "without screening on the cpu pool")] = False,
    cuda_graphs: Annotated[bool, typer.Option("--cuda-graphs", help="your model replays its kernels in CUDA "
                                                                    "graphs: rank kernels by GPU time alone "
                                                                    "(default: per call in a back-to-back loop, "
                                                                    "the host's work included)")] = False,
    allow_tf32: Annotated[bool, typer.Option("--allow-tf32", help="float32 products and convolutions may use TF32 "
                                                                  "tensor cores, in kernels and baselines alike "
                                                                  "(set --atol/--rtol to what you accept)")] = False,
    cpu_size: Annotated[list[str] | None, typer.Option(
        "--cpu-size", help="NAME=VALUE: a size constant's value on the interpreter (cpu) pools; repeat for several. "
                           "Default: the spec's cpu_shapes, else sizes derived at submit")] = None,
    atol: Annotated[float, typer.Option(help="absolute tolerance of the correctness check (0 = the spec's, else "
                                             "per dtype)")] = 0.0,
    rtol: Annotated[float, typer.Option(help="relative tolerance (0 = the spec's, else per dtype)")] = 0.0,
    wait: Annotated[bool, typer.Option("--follow/--no-follow", help="show progress until the job ends")] = True,
    output: OutputOption = Output.table,
    target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR,
) -> None:
    """Submit a spec (KernelBench format) and follow the job (exit 0 once it succeeds)."""
    cpu_sizes = sizes(cpu_size or [])
    text = source(spec)
    c = client(target, run_dir)
    config = _config(budget, policy, parallelism, seed, reuse, wall_clock_s, max_tokens, max_cost_usd, patience,
                     target_speedup, uct_c, islands, migration_interval, model or [], skip_screening,
                     cuda_graphs, allow_tf32)
    quiet = output == Output.json
    try:
        job = c.submit_source(spec.stem, text, platform_name(platform), config, cpu_sizes=cpu_sizes, atol=atol,
                              rtol=rtol)
        c.close()
        if not quiet:
            console.print(f"submitted job [bold]{job.job_id}[/]")
        if wait:
            # Resolved again on every reconnect: a restarted `kevolve up` controller is found anew.
            connect = lambda: JobClient(resolve_target(target, run_dir))  # noqa: E731
            job = _wait_quietly(connect, job.job_id) if quiet else follow(connect, job.job_id, budget)
            if not quiet:
                console.print(job_table(job))
    except ClientError as exc:
        raise fail(exc) from exc
    if quiet:
        print_json(as_dict(job))
    if wait:
        require_success(job)


def _wait_quietly(connect: Callable[[], JobClient], job_id: str) -> job_pb2.Job:
    job: job_pb2.Job | None = None
    for event in follow_events(connect, job_id, on_outage=lambda message: None):
        job = event.job
    assert job is not None
    return job


@app.command(name="list")
def list_jobs(limit: Annotated[int, typer.Option(help="the most recent jobs, at most this many")] = 50,
              output: OutputOption = Output.table, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """List your jobs, newest first."""
    try:
        jobs = client(target, run_dir).list_jobs(limit)
    except ClientError as exc:
        raise fail(exc) from exc
    if output == Output.json:
        print_json([as_dict(j) for j in jobs])
        return
    table = Table()
    for column in ("job", "spec", "platform", "state", "candidates", "passed", "best fitness", "end reason"):
        table.add_column(column, no_wrap=column == "job")
    for j in jobs:
        table.add_row(j.job_id, j.spec.name, j.platform, job_pb2.JobState.Name(j.state), str(j.candidates),
                      str(j.passed), f"{j.best_fitness:.3f}" if j.passed else "-", j.end_reason or "-")
    console.print(table)


@app.command()
def status(job_id: str, output: OutputOption = Output.table, target: Target = None,
           run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Show a job's state and best result."""
    try:
        job = client(target, run_dir).get(job_id)
    except ClientError as exc:
        raise fail(exc) from exc
    if output == Output.json:
        print_json(as_dict(job))
    else:
        console.print(job_table(job))


@app.command()
def watch(job_id: str, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Re-attach the live progress view of a running job (exit 0 once it succeeds)."""
    try:
        cl = client(target, run_dir)
        job = cl.get(job_id)
        # What happened before re-attaching: a line per candidate with a verdict already.
        for c in cl.candidates(job_id):
            if c.verdict != common_pb2.VERDICT_UNSPECIFIED:
                console.print(candidate_line(c, job_id))
        if job.state not in (job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED):
            job = follow(lambda: JobClient(resolve_target(target, run_dir)), job_id, job.config.budget or job.candidates)
    except ClientError as exc:
        raise fail(exc) from exc
    console.print(job_table(job))
    require_success(job)


@app.command()
def candidates(job_id: str, output: OutputOption = Output.table, target: Target = None,
               run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """List a job's candidate nodes."""
    try:
        nodes = client(target, run_dir).candidates(job_id)
    except ClientError as exc:
        raise fail(exc) from exc
    if output == Output.json:
        print_json([as_dict(n) for n in nodes])
        return
    # Node ids are the job id plus a suffix: the suffix alone tells nodes apart (and is what
    # `kevolve node JOB NODE` takes), and it is never wrapped.
    table = Table(caption=f"node ids are {job_id}-<node>")
    for column in ("node", "parent"):
        table.add_column(column, no_wrap=True)
    for column in ("gen", "verdict", "fitness", "decided by", "reason"):
        table.add_column(column)
    for c in nodes:
        table.add_row(node_name(c.node_id, job_id), node_name(c.parent_id, job_id) or "-", str(c.generation),
                      common_pb2.Verdict.Name(c.verdict), f"{c.fitness:.3f}", c.decided_by, c.reason[:60])
    console.print(table)


def _find(c: JobClient, job_id: str, node_id: str) -> job_pb2.Candidate:
    found = [n for n in c.candidates(job_id) if n.node_id in (node_id, f"{job_id}-{node_id}")]
    if not found:
        raise ClientError(f"job {job_id} has no node {node_id!r}")
    return found[0]


@app.command()
def node(job_id: str, node_id: Annotated[str, typer.Argument(help="the node's suffix (as `candidates` shows it) "
                                                                   "or its whole id")],
         prompt: Annotated[bool, typer.Option("--prompt", help="print the prompt that produced it")] = False,
         code: Annotated[bool, typer.Option("--code", help="print its source (alone, unwrapped: redirect it to a "
                                                           "file to keep the kernel)")] = False,
         reply: Annotated[bool, typer.Option("--reply", help="print the LLM's raw reply it came from (alone)")] = False,
         output: OutputOption = Output.table, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Why a kernel was written and how it fared: diagnosis docs, usage, verdict, profile, prompt."""
    cl = client(target, run_dir)
    try:
        c = _find(cl, job_id, node_id)
        if reply:
            if not c.reply_key:
                raise ClientError(f"node {c.node_id} has no LLM reply (made by {c.backend or 'no backend'})")
            sys.stdout.write(cl.artifact(job_id, c.reply_key).decode("utf-8", "replace"))
            return
        if code and not prompt:
            # The source alone, byte for byte: `kevolve node JOB NODE --code > kernel.py` parses.
            if not c.code_key:
                raise ClientError(f"node {c.node_id} has no code ({common_pb2.Verdict.Name(c.verdict)})")
            sys.stdout.write(cl.artifact(job_id, c.code_key).decode("utf-8", "replace"))
            return
        if output == Output.json:
            print_json(as_dict(c))
            return
        table = Table(show_header=False, box=None)
        rows = [
            ("node", c.node_id), ("parent", c.parent_id or "(from the spec)"), ("generation", str(c.generation)),
            ("context mode", common_pb2.ContextMode.Name(c.context_mode)), ("backend", c.backend),
            ("tunables", ", ".join(f"{k}={v}" for k, v in sorted(c.tunables.items())) or "-"),
            ("diagnosis", c.diagnosis or "-"),
            ("retrieved docs", "\n".join(c.retrieved_docs) or "-"),
            ("LLM usage", f"{c.usage.model or '-'}: {c.usage.prompt_tokens} in, {c.usage.completion_tokens} out, "
                          f"${c.usage.cost_usd:.4f}"),
            ("verdict", f"{common_pb2.Verdict.Name(c.verdict)} ({c.decided_by or '-'})"),
            ("fitness", f"{c.fitness:.3f}"), ("reason", c.reason or "-"),
            ("profile", c.profile_summary or "-"),
        ]
        for key, value in rows:
            table.add_row(f"[bold]{key}[/]", value)
        console.print(table)
        # Prompt and code are written as they are, never re-wrapped to the terminal's width.
        if prompt and c.prompt_key:
            console.rule("prompt")
            sys.stdout.write(cl.artifact(job_id, c.prompt_key).decode("utf-8", "replace") + "\n")
        if code and c.code_key:
            console.rule("code")
            sys.stdout.write(cl.artifact(job_id, c.code_key).decode("utf-8", "replace") + "\n")
    except ClientError as exc:
        raise fail(exc) from exc


@app.command()
def approve(job_id: str, node_id: Annotated[str, typer.Argument(help="a SUSPICIOUS node (its suffix or id)")],
            target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Approve a SUSPICIOUS candidate (over 10x, or under the bandwidth floor) once you have read it."""
    cl = client(target, run_dir)
    try:
        c = cl.approve(job_id, _find(cl, job_id, node_id).node_id)
    except ClientError as exc:
        raise fail(exc) from exc
    console.print(f"approved {c.node_id}: {common_pb2.Verdict.Name(c.verdict)}, fitness {c.fitness:.3f}")


@app.command()
def best(job_id: str, output: Annotated[Path, typer.Option("-o", "--output", help="file to write")] = Path("kernel.py"),
         target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write the job's best verified kernel to a file."""
    try:
        reply = client(target, run_dir).best(job_id)
    except ClientError as exc:
        raise fail(exc) from exc
    output.write_text(reply.code)
    c = reply.candidate
    console.print(f"wrote {output}: node {c.node_id}, {common_pb2.Verdict.Name(c.verdict)}, "
                  f"fitness {c.fitness:.3f} on {reply.platform}")


@app.command()
def cancel(job_id: str, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Cancel a job (candidates already evaluated are kept)."""
    try:
        console.print(job_table(client(target, run_dir).cancel(job_id)))
    except ClientError as exc:
        raise fail(exc) from exc


@app.command()
def export(job_id: str, output: Annotated[Path, typer.Option("-o", "--output", help="module to write")] = Path(
               "kevolve_kernels.py"),
           target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write one module dispatching each shape to its best verified kernel (PyTorch for anything else)."""
    try:
        reply = client(target, run_dir).export(job_id)
    except ClientError as exc:
        raise fail(exc) from exc
    output.write_text(reply.module_source)
    console.print(f"wrote {output}: {reply.kernels} kernel(s), {reply.fallbacks} shape(s) fall back to PyTorch")


@app.command()
def report(job_id: str, output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write")] = Path(
               "report.html"),
           target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write the job's HTML report (search tree, fitness over time, failures, per-shape speedups, best code)."""
    try:
        html = client(target, run_dir).report(job_id)
    except ClientError as exc:
        raise fail(exc) from exc
    output.write_text(html)
    console.print(f"wrote {output}")
