"""The `kevolve` command: run the system on one machine, submit and follow jobs, vet kernels."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kevolve.client.jobclient import TERMINAL, ClientError, JobClient, follow_events, read_source, resolve_target
from kevolve.client.launcher import DEFAULT_HOST, exposure_error, find_running, start_system
from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2, job_pb2

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="kevolve: search Triton kernels that are proven correct and faster than torch.compile.")
console = Console()
# Errors stay on one line whatever the terminal's width (scripts read them line by line).
err = Console(stderr=True, soft_wrap=True)

RunDir = Annotated[Path, typer.Option("--run-dir", help="where `kevolve up` keeps its state",
                                      envvar="KEVOLVE_RUN_DIR")]
Target = Annotated[str | None, typer.Option("--target", help="controller gRPC HOST:PORT (default: the local `up`)")]
DEFAULT_RUN_DIR = Path(".kevolve")

POLICIES = {"greedy": job_pb2.GREEDY, "mcts": job_pb2.MCTS, "evolutionary": job_pb2.EVOLUTIONARY,
            "random": job_pb2.RANDOM}


def _print_version(asked: bool) -> None:
    if asked:
        import kevolve

        typer.echo(f"kevolve {kevolve.__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                help="print kevolve's version and exit")] = False) -> None:
    """kevolve: search Triton kernels that are proven correct and faster than torch.compile."""


def _client(target: str | None, run_dir: Path) -> JobClient:
    try:
        return JobClient(resolve_target(target, run_dir))
    except ClientError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[red]error:[/] {escape(str(exc))}")
    return typer.Exit(1)


def _job_table(job: job_pb2.Job) -> Table:
    table = Table(show_header=False, box=None)
    unit = job.fitness_unit or ("speedup vs torch.compile" if job.fitness_is_speed else "correctness only")
    rows = [
        ("job", job.job_id), ("spec", job.spec.name), ("platform", job.platform),
        ("state", job_pb2.JobState.Name(job.state)), ("end reason", job.end_reason or "-"),
        ("candidates", f"{job.candidates} created, {job.evaluated} evaluated, {job.passed} passed"),
        ("best", f"{job.best_node_id or '-'}  fitness {job.best_fitness:.3f} ({unit})"),
        ("LLM usage", f"{job.usage.prompt_tokens + job.usage.completion_tokens} tokens, ${job.usage.cost_usd:.4f}"),
    ]
    if job.spec.cpu_sizes:  # the spec's cpu_shapes, --cpu-size, or the sizes derived at submit
        rows.insert(3, ("screening sizes", ", ".join(f"{k}={v}" for k, v in sorted(job.spec.cpu_sizes.items()))))
    for key, value in rows:
        table.add_row(f"[bold]{key}[/]", value)
    return table


def follow(connect: Callable[[], JobClient], job_id: str, budget: int) -> job_pb2.Job:
    """Live progress until the job ends: a bar of candidates evaluated and the best fitness.

    Survives restarts of the controller: ``connect`` is called again to reach it.
    """
    job: job_pb2.Job | None = None
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("{task.fields[best]}"), TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task("evaluated", total=max(budget, 1), best="")

        def outage(message: str) -> None:
            progress.console.print(f"  [yellow]{escape(message)}[/]")

        for event in follow_events(connect, job_id, on_outage=outage):
            job = event.job
            unit = "x" if job.fitness_is_speed else " (pass)"
            progress.update(task, completed=job.evaluated, total=max(budget, job.candidates),
                            best=f"best fitness {job.best_fitness:.3f}{unit}")
            if event.kind == "evaluated" and event.HasField("candidate"):
                c = event.candidate
                verdict = common_pb2.Verdict.Name(c.verdict)
                short = c.node_id.removeprefix(f"{job_id}-")
                progress.console.print(f"  node {short:<5} gen {c.generation} {verdict:<16} "
                                       f"fitness {c.fitness:.3f}  {c.reason[:80]}")
    assert job is not None   # follow_events returns only after the job's last event
    return job


def _source(path: Path) -> str:
    """A file given on the command line, or a one-line error and exit code 2."""
    try:
        return read_source(path)
    except ClientError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc


@app.command()
def up(run_dir: RunDir = DEFAULT_RUN_DIR,
       platform: Annotated[list[str], typer.Option("--platform", help="evaluator pools to start")] = ["cpu"],
       port: Annotated[int, typer.Option(help="controller gRPC port (0 = free port)")] = 50051,
       host: Annotated[str, typer.Option(help="address the gRPC API binds; another than loopback needs "
                                              "KEVOLVE_CONTROLLER_TOKENS or --insecure-open",
                                         envvar="KEVOLVE_CONTROLLER_GRPC_HOST")] = DEFAULT_HOST,
       insecure_open: Annotated[bool, typer.Option("--insecure-open",
                                                   help="serve an API without tokens beyond loopback")] = False,
       ) -> None:
    """Start the whole system on this machine (embedded NATS, SQLite, local object store) and stay up."""
    refused = exposure_error(host, os.environ, insecure_open)
    if refused:
        err.print(f"[red]error:[/] {escape(refused)}")
        raise typer.Exit(2)
    if find_running(run_dir):
        raise _fail(RuntimeError(f"kevolve is already running under {run_dir}"))
    try:
        system = start_system(run_dir, tuple(platform), grpc_port=port, grpc_host=host)
    except (RuntimeError, TimeoutError, OSError) as exc:   # start_system stopped what it started
        raise _fail(exc) from exc

    def _terminate(signum: int, frame: object) -> None:
        # SIGTERM (systemd, kill) stops as cleanly as Ctrl-C. Ignore repeats, so a second
        # signal (a wrapper forwarding its own) cannot cut the orderly stop short and orphan
        # the services.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    console.print(f"kevolve is up: gRPC {system.grpc_target}, NATS {system.nats.url}, logs in {run_dir / 'logs'}")
    try:
        while True:
            time.sleep(1)
            for event in system.supervise_once():
                err.print(f"[yellow]{escape(event.message)}[/]")
    except KeyboardInterrupt:
        console.print("stopping...")
    finally:
        system.stop()


def _sizes(pairs: list[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for pair in pairs:
        raw_name, _, value = pair.partition("=")
        name = raw_name.strip()
        try:
            sizes[name] = int(value)
        except ValueError:
            raise _fail(ValueError(f"--cpu-size {pair!r}: expected NAME=INTEGER")) from None
        if not name or sizes[name] <= 0:
            raise _fail(ValueError(f"--cpu-size {pair!r}: expected NAME=INTEGER with a positive integer"))
    return sizes


@app.command()
def submit(spec: Path, platform: str = "cpu", budget: int = 8,
           policy: Annotated[str, typer.Option(help="greedy|mcts|evolutionary|random")] = "greedy",
           parallelism: int = 2, seed: int = 1, no_reuse: bool = False,
           wait: Annotated[bool, typer.Option("--follow/--no-follow")] = True,
           cpu_size: Annotated[list[str] | None, typer.Option(
               "--cpu-size", help="NAME=VALUE: a size constant's value on the interpreter (cpu) pools; "
               "repeat for several. Default: the spec's cpu_shapes, else sizes derived at submit")] = None,
           target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Submit a spec (KernelBench format) and follow the job (exit 0 once it succeeds)."""
    if policy not in POLICIES:
        raise _fail(ValueError(f"--policy must be one of {', '.join(POLICIES)}"))
    sizes = _sizes(cpu_size or [])
    source = _source(spec)
    client = _client(target, run_dir)
    config = job_pb2.JobConfig(budget=budget, policy=POLICIES[policy], parallelism=parallelism, seed=seed,
                               no_reuse=no_reuse)
    try:
        job = client.submit_source(spec.stem, source, platform, config, cpu_sizes=sizes)
        client.close()
        console.print(f"submitted job [bold]{job.job_id}[/]")
        if wait:
            # Resolved again on every reconnect: a restarted `kevolve up` controller is found anew.
            job = follow(lambda: JobClient(resolve_target(target, run_dir)), job.job_id, budget)
            console.print(_job_table(job))
    except ClientError as exc:
        raise _fail(exc) from exc
    if wait and job.state != job_pb2.SUCCEEDED:
        raise _fail(RuntimeError(f"job {job.job_id} ended {job_pb2.JobState.Name(job.state)}: "
                                 f"{job.end_reason or 'no reason given'}"))


@app.command()
def status(job_id: str, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Show a job's state and best result."""
    try:
        console.print(_job_table(_client(target, run_dir).get(job_id)))
    except ClientError as exc:
        raise _fail(exc) from exc


@app.command()
def candidates(job_id: str, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """List a job's candidate nodes."""
    try:
        nodes = _client(target, run_dir).candidates(job_id)
    except ClientError as exc:
        raise _fail(exc) from exc
    # Node ids are the job id plus a suffix: the suffix alone tells nodes apart (and is what
    # `kevolve node JOB NODE` takes), and it is never wrapped.
    table = Table(caption=f"node ids are {job_id}-<node>")
    for column in ("node", "parent"):
        table.add_column(column, no_wrap=True)
    for column in ("gen", "verdict", "fitness", "decided by", "reason"):
        table.add_column(column)
    for c in nodes:
        table.add_row(_node_suffix(c.node_id, job_id), _node_suffix(c.parent_id, job_id) or "-", str(c.generation),
                      common_pb2.Verdict.Name(c.verdict), f"{c.fitness:.3f}", c.decided_by, c.reason[:60])
    console.print(table)


def _node_suffix(node_id: str, job_id: str) -> str:
    return node_id[len(job_id) + 1:] if node_id.startswith(f"{job_id}-") else node_id


@app.command()
def node(job_id: str, node_id: str,
         prompt: Annotated[bool, typer.Option("--prompt", help="print the prompt that produced it")] = False,
         code: Annotated[bool, typer.Option("--code", help="print its source (alone, unwrapped: redirect it to a "
                                                           "file to keep the kernel)")] = False,
         target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Why a kernel was written and how it fared: diagnosis docs, usage, verdict, profile, prompt."""
    client = _client(target, run_dir)
    try:
        found = [c for c in client.candidates(job_id) if c.node_id == node_id or c.node_id.endswith(node_id)]
        if not found:
            raise ClientError(f"job {job_id} has no node {node_id!r}")
        c = found[0]
        if code and not prompt:
            # The source alone, byte for byte: `kevolve node JOB NODE --code > kernel.py` parses.
            if not c.code_key:
                raise ClientError(f"node {c.node_id} has no code ({common_pb2.Verdict.Name(c.verdict)})")
            sys.stdout.write(client.artifact(job_id, c.code_key).decode("utf-8", "replace"))
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
            sys.stdout.write(client.artifact(job_id, c.prompt_key).decode("utf-8", "replace") + "\n")
        if code and c.code_key:
            console.rule("code")
            sys.stdout.write(client.artifact(job_id, c.code_key).decode("utf-8", "replace") + "\n")
    except ClientError as exc:
        raise _fail(exc) from exc


@app.command()
def best(job_id: str, output: Annotated[Path, typer.Option("-o", "--output")] = Path("kernel.py"),
         target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write the job's best verified kernel to a file."""
    try:
        reply = _client(target, run_dir).best(job_id)
    except ClientError as exc:
        raise _fail(exc) from exc
    output.write_text(reply.code)
    c = reply.candidate
    console.print(f"wrote {output}: node {c.node_id}, {common_pb2.Verdict.Name(c.verdict)}, "
                  f"fitness {c.fitness:.3f} on {reply.platform}")


@app.command()
def cancel(job_id: str, target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Cancel a job (candidates already evaluated are kept)."""
    try:
        console.print(_job_table(_client(target, run_dir).cancel(job_id)))
    except ClientError as exc:
        raise _fail(exc) from exc


@app.command(name="eval")
def eval_(spec: Path, candidate: Path, platform: str = "cpu", as_json: Annotated[bool, typer.Option("--json")] = False,
          cpu_size: Annotated[list[str] | None, typer.Option(
              "--cpu-size", help="NAME=VALUE: a size constant's value on the interpreter (cpu) pools; repeat for "
                                 "several. Default: the spec's cpu_shapes, else sizes derived as submit derives them")
          ] = None) -> None:
    """Evaluate one candidate against a spec with exactly the checks a job uses (exit 0 only on a pass)."""
    source = _source(spec)
    _source(candidate)
    sizes = _sizes(cpu_size or []) or _screening_sizes(source, platform, quiet=as_json)
    args = [sys.executable, "-m", "services.evaluator", "eval", str(spec), str(candidate), "--platform", platform]
    args += [f"--cpu-size={name}={value}" for name, value in sizes.items()]
    if as_json:
        args.append("--json")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    raise typer.Exit(subprocess.call(args, env=env))


def _screening_sizes(source: str, platform: str, quiet: bool) -> dict[str, int]:
    """For a platform that screens under the interpreter, the sizes a job would derive at
    submit for a spec without cpu_shapes (the spec runs in the sandbox, as on submit)."""
    from kevolve.config import CommonSettings
    from kevolve.platforms import UnknownPlatform, get_platform
    from kevolve.specfile import SpecError, check_outline
    from services.controller.api.specprobe import probe

    try:
        if get_platform(CommonSettings().kb_dir, platform).runner == "cuda" or check_outline(source).cpu_sizes:
            return {}
        sizes = probe(source, {}, timeout_s=60).screening_sizes
    except (UnknownPlatform, SpecError) as exc:
        raise _fail(exc) from exc
    if sizes and not quiet:
        console.print("screening sizes (derived): " + ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())))
    return sizes


@app.command()
def export(job_id: str, output: Annotated[Path, typer.Option("-o", "--output")] = Path("kevolve_kernels.py"),
           target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write one module dispatching each shape to its best verified kernel (PyTorch fallback elsewhere)."""
    try:
        reply = _client(target, run_dir).export(job_id)
    except ClientError as exc:
        raise _fail(exc) from exc
    output.write_text(reply.module_source)
    console.print(f"wrote {output}: {reply.kernels} kernel(s), {reply.fallbacks} shape(s) fall back to PyTorch")


@app.command()
def report(job_id: str, output: Annotated[Path, typer.Option("-o", "--output")] = Path("report.html"),
           target: Target = None, run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Write the job's HTML report (search tree, fitness over time, per-shape speedups, best code)."""
    try:
        html = _client(target, run_dir).report(job_id)
    except ClientError as exc:
        raise _fail(exc) from exc
    output.write_text(html)
    console.print(f"wrote {output}")


@app.command()
def demo(spec: Path = REPO_ROOT / "examples" / "softmax.py", budget: int = 6, platform: str = "cpu",
         run_dir: RunDir = Path(".kevolve/demo")) -> None:
    """Start everything, run one job on an example spec, show where the best kernel went, stop."""
    console.print(f"starting NATS and the five services under {run_dir} ...")
    system = start_system(run_dir, (platform,))
    client = JobClient(system.grpc_target)
    try:
        config = job_pb2.JobConfig(budget=budget, policy=job_pb2.GREEDY, parallelism=2, seed=7, no_reuse=True)
        job = client.submit(spec, platform, config)
        console.print(f"submitted {spec.name} as job [bold]{job.job_id}[/] (platform {platform}, budget {budget})")
        job = follow(lambda: JobClient(system.grpc_target), job.job_id, budget)
        console.print(_job_table(job))
        if job.best_node_id:
            reply = client.best(job.job_id)
            out = run_dir / f"best_{spec.stem}.py"
            out.write_text(reply.code)
            verdict = common_pb2.Verdict.Name(reply.candidate.verdict)
            console.print(f"[green]best kernel written to {out.resolve()}[/]: {verdict} (passed correctness) "
                          f"on platform {reply.platform}")
        else:
            raise _fail(RuntimeError(f"no candidate passed ({job.end_reason}); logs in {run_dir / 'logs'}"))
    except ClientError as exc:
        raise _fail(exc) from exc
    finally:
        client.close()
        system.stop()


def _bench_command() -> None:
    """`kevolve bench` is registered only once its implementation module exists."""
    try:
        from kevolve.client import bench as bench_module  # noqa: F401
    except ImportError:
        return
    if hasattr(bench_module, "register"):
        bench_module.register(app)


_bench_command()

if __name__ == "__main__":
    app()
