"""The `kevolve` command: run the system on one machine, submit and follow jobs, vet kernels."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kevolve.client import cli_jobs  # noqa: F401 - registers the job commands on the app
from kevolve.client.cli_common import (DEFAULT_RUN_DIR, PlatformOption, RunDir, app, console, err, fail,
                                       platform_name, sizes, source)
from kevolve.client.cli_jobs import follow, job_table
from kevolve.client.jobclient import ClientError, JobClient
from kevolve.client.launcher import DEFAULT_HOST, exposure_error, find_running, start_system, visible_gpus
from kevolve.config import REPO_ROOT
from kevolve.v1 import common_pb2, job_pb2


def _print_version(asked: bool) -> None:
    if asked:
        import kevolve

        typer.echo(f"kevolve {kevolve.__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                help="print kevolve's version and exit")] = False) -> None:
    """kevolve: search Triton kernels that are proven correct and faster than torch.compile."""


def _gpus(choice: str, platforms: list[str]) -> tuple[str, ...]:
    """The GPUs `up --gpus` names; nvidia-smi is asked only when a pool other than cpu runs."""
    choice = choice.strip()   # as written: a GPU's UUID (GPU-5f1c...) is read case by case
    if choice.lower() == "none" or set(platforms) <= {"cpu"}:
        return ()
    if choice.lower() == "all":
        return visible_gpus(os.environ)
    entries = tuple(e.strip() for e in choice.split(","))
    if not all(entries) or len(set(entries)) != len(entries):
        raise typer.BadParameter(f"{choice!r}: name each GPU once, as in '0,1' (or 'all', 'none')",
                                 param_hint="--gpus")
    return entries


@app.command()
def up(run_dir: RunDir = DEFAULT_RUN_DIR,
       platform: Annotated[list[str], typer.Option("--platform", help="evaluator pools to start")] = ["cpu"],
       port: Annotated[int, typer.Option(help="controller gRPC port (0 = free port)")] = 50051,
       host: Annotated[str, typer.Option(help="address the gRPC API binds; another than loopback needs "
                                              "KEVOLVE_CONTROLLER_TOKENS or --insecure-open",
                                         envvar="KEVOLVE_CONTROLLER_GRPC_HOST")] = DEFAULT_HOST,
       insecure_open: Annotated[bool, typer.Option("--insecure-open",
                                                   help="serve an API without tokens beyond loopback")] = False,
       workers: Annotated[int, typer.Option(min=1, max=16, help="evaluator workers per GPU of each pool other "
                                                                "than cpu (they share the GPU; its timing lock "
                                                                "times one candidate at a time)")] = 1,
       generators: Annotated[int, typer.Option(min=1, max=64, help="generator replicas (each lowers specs on a "
                                                                   "core of its own; more for many jobs at once)")] = 1,
       gpus: Annotated[str, typer.Option(help="GPUs the GPU pools use, each with its own workers: 'all' "
                                              "(CUDA_VISIBLE_DEVICES's, else every GPU nvidia-smi lists), "
                                              "a list such as '0,1', or 'none' (the workers are not pinned)")] = "all",
       ) -> None:
    """Start the whole system on this machine (embedded NATS, SQLite, local object store) and stay up."""
    pinned = _gpus(gpus, platform)
    refused = exposure_error(host, os.environ, insecure_open)
    if refused:
        err.print(f"[red]error:[/] {escape(refused)}")
        raise typer.Exit(2)
    if find_running(run_dir):
        raise fail(RuntimeError(f"kevolve is already running under {run_dir}"))
    try:
        system = start_system(run_dir, tuple(platform), grpc_port=port, grpc_host=host, gpu_workers=workers,
                              gpus=pinned, generators=generators)
    except (RuntimeError, TimeoutError, OSError) as exc:   # start_system stopped what it started
        raise fail(exc) from exc

    def _terminate(signum: int, frame: object) -> None:
        # SIGTERM (systemd, kill) stops as cleanly as Ctrl-C. Ignore repeats, so a second
        # signal (a wrapper forwarding its own) cannot cut the orderly stop short and orphan
        # the services.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    console.print(f"kevolve is up: gRPC {system.grpc_target}, NATS {system.nats.url}, logs in {run_dir / 'logs'}")
    fatal = False
    try:
        while not fatal:
            time.sleep(1)
            for event in system.supervise_once():
                err.print(f"[{'red' if event.fatal else 'yellow'}]{escape(event.message)}[/]")
                fatal = fatal or event.fatal
    except KeyboardInterrupt:
        console.print("stopping...")
    finally:
        system.stop()
    if fatal:
        raise typer.Exit(1)


@app.command(name="eval")
def eval_(spec: Annotated[Path, typer.Argument(help="the spec (KernelBench format)")],
          candidate: Annotated[Path, typer.Argument(help="a module defining ModelNew")],
          platform: PlatformOption = "cpu",  # type: ignore[assignment]
          as_json: Annotated[bool, typer.Option("--json", help="print the whole evaluation report as JSON")] = False,
          cpu_size: Annotated[list[str] | None, typer.Option(
              "--cpu-size", help="NAME=VALUE: a size constant's value on the interpreter (cpu) pools; repeat for "
                                 "several. Default: the spec's cpu_shapes, else sizes derived as submit derives them")
          ] = None) -> None:
    """Evaluate one candidate against a spec with exactly the checks a job uses (exit 0 only on a pass)."""
    name = platform_name(platform)
    spec_source = source(spec)
    source(candidate)
    chosen = sizes(cpu_size or []) or _screening_sizes(spec_source, name, quiet=as_json)
    args = [sys.executable, "-m", "services.evaluator", "eval", str(spec), str(candidate), "--platform", name]
    args += [f"--cpu-size={key}={value}" for key, value in chosen.items()]
    if as_json:
        args.append("--json")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    raise typer.Exit(subprocess.call(args, env=env))


def _screening_sizes(spec_source: str, platform: str, quiet: bool) -> dict[str, int]:
    """For a platform that screens under the interpreter, the sizes a job would derive at
    submit for a spec without cpu_shapes (the spec runs in the sandbox, as on submit)."""
    from kevolve.config import CommonSettings
    from kevolve.platforms import UnknownPlatform, get_platform
    from kevolve.specfile import SpecError, check_outline
    from services.controller.api.specprobe import probe

    try:
        if get_platform(CommonSettings().kb_dir, platform).runner == "cuda" or check_outline(spec_source).cpu_sizes:
            return {}
        derived = probe(spec_source, {}, timeout_s=60).screening_sizes
    except (UnknownPlatform, SpecError) as exc:
        raise fail(exc) from exc
    if derived and not quiet:
        console.print("screening sizes (derived): " + ", ".join(f"{k}={v}" for k, v in sorted(derived.items())))
    return derived


@app.command()
def demo(spec: Annotated[Path, typer.Argument(help="the spec to optimise")] = REPO_ROOT / "examples" / "softmax.py",
         budget: Annotated[int, typer.Option(help="candidates")] = 6,
         platform: Annotated[str, typer.Option(help="the target (its pool is started)")] = "cpu",
         run_dir: RunDir = DEFAULT_RUN_DIR / "demo") -> None:
    """Start everything, run one job on an example spec, show where the best kernel went, stop."""
    console.print(f"starting NATS and the five services under {run_dir} ...")
    system = start_system(run_dir, (platform,))
    client = JobClient(system.grpc_target)
    try:
        config = job_pb2.JobConfig(budget=budget, policy=job_pb2.GREEDY, parallelism=2, seed=7, no_reuse=True)
        job = client.submit(spec, platform, config)
        console.print(f"submitted {spec.name} as job [bold]{job.job_id}[/] (platform {platform}, budget {budget})")
        job = follow(lambda: JobClient(system.grpc_target), job.job_id, budget)
        console.print(job_table(job))
        if job.best_node_id:
            reply = client.best(job.job_id)
            out = run_dir / f"best_{spec.stem}.py"
            out.write_text(reply.code)
            verdict = common_pb2.Verdict.Name(reply.candidate.verdict)
            console.print(f"[green]best kernel written to {out.resolve()}[/]: {verdict} (passed correctness) "
                          f"on platform {reply.platform}")
        else:
            raise fail(RuntimeError(f"no candidate passed ({job.end_reason}); logs in {run_dir / 'logs'}"))
    except ClientError as exc:
        raise fail(exc) from exc
    finally:
        client.close()
        system.stop()


@app.command()
def throughput(spec: Annotated[Path, typer.Argument(help="the spec one long search runs on")],
               platform: PlatformOption = "cpu",  # type: ignore[assignment]
               budget: Annotated[int, typer.Option(help="candidates the search judges")] = 40,
               parallelism: Annotated[int, typer.Option(help="expansions in flight")] = 4,
               wall_clock_s: Annotated[float, typer.Option(help="the search's own time limit")] = 1800.0,
               out: Annotated[Path | None, typer.Option(help="report folder (default: RUN_DIR/throughput)")] = None,
               target: Annotated[str | None, typer.Option("--target", help="controller HOST:PORT")] = None,
               run_dir: RunDir = DEFAULT_RUN_DIR) -> None:
    """Judge one long search against a running system: candidates per minute, time per evaluation and its phases,
    GPU busy share."""
    from kevolve.client import throughput as tp
    from kevolve.client.jobclient import resolve_target

    source(spec)
    try:
        client = JobClient(resolve_target(target, run_dir))
        report = tp.measure(client, spec, platform_name(platform), budget, parallelism, wall_clock_s)
    except ClientError as exc:
        raise fail(exc) from exc
    paths = tp.write(report, out or run_dir / "throughput")
    console.print(report.markdown(), markup=False)
    console.print(f"wrote {paths[0]} and {paths[1]}")


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
