"""What every `kevolve` command shares: the Typer app, consoles, the options that find the
system (run dir, target) and the one-line errors."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from rich.console import Console
from rich.markup import escape

from kevolve.client.jobclient import ClientError, JobClient, read_source, resolve_target
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.platforms import load_platforms
from kevolve.v1 import job_pb2

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="kevolve: search Triton kernels that are proven correct and faster than torch.compile.")
console = Console()
# Errors stay on one line whatever the terminal's width (scripts read them line by line).
err = Console(stderr=True, soft_wrap=True)

# Absolute, so every command finds the system `kevolve up` started from whichever folder it
# runs in (a relative default found it only from the folder `up` ran in).
DEFAULT_RUN_DIR = REPO_ROOT / ".kevolve"
RunDir = Annotated[Path, typer.Option("--run-dir", envvar="KEVOLVE_RUN_DIR",
                                      help="where `kevolve up` keeps its state (NATS store, database, logs)")]
Target = Annotated[str | None, typer.Option("--target", envvar="KEVOLVE_TARGET",
                                            help="controller gRPC HOST:PORT (default: the local `kevolve up`)")]


class Policy(str, Enum):
    greedy = "greedy"
    mcts = "mcts"
    evolutionary = "evolutionary"
    random = "random"


POLICIES = {Policy.greedy: job_pb2.GREEDY, Policy.mcts: job_pb2.MCTS, Policy.evolutionary: job_pb2.EVOLUTIONARY,
            Policy.random: job_pb2.RANDOM}


class Output(str, Enum):
    table = "table"
    json = "json"


OutputOption = Annotated[Output, typer.Option("-o", "--output-format",
                                              help="table for people, json (one object) for scripts")]


def platform_names() -> list[str]:
    """The targets kb/platforms.toml lists (the choices of --platform)."""
    try:
        return sorted(load_platforms(CommonSettings().kb_dir))
    except (OSError, ValueError):
        return ["cpu", "cuda", "mtia-sim"]


# --platform's choices, read from kb/platforms.toml when the command starts.
PlatformName = Enum("PlatformName", {name: name for name in platform_names()}, type=str)  # type: ignore[misc]
PlatformOption = Annotated[PlatformName, typer.Option(  # type: ignore[valid-type]
    "--platform", help="the target; its evaluator pool must be running (`kevolve up --platform NAME`)")]


def platform_name(platform: object) -> str:
    """--platform's value as a plain name (typer passes the choice's enum member)."""
    return str(getattr(platform, "value", platform))


def client(target: str | None, run_dir: Path) -> JobClient:
    try:
        return JobClient(resolve_target(target, run_dir))
    except ClientError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def fail(exc: Exception) -> typer.Exit:
    err.print(f"[red]error:[/] {escape(str(exc))}")
    return typer.Exit(1)


def source(path: Path) -> str:
    """A file given on the command line, or a one-line error and exit code 2."""
    try:
        return read_source(path)
    except ClientError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def sizes(pairs: list[str]) -> dict[str, int]:
    """``NAME=VALUE`` options as size overrides."""
    out: dict[str, int] = {}
    for pair in pairs:
        raw_name, _, value = pair.partition("=")
        name = raw_name.strip()
        try:
            out[name] = int(value)
        except ValueError:
            raise fail(ValueError(f"--cpu-size {pair!r}: expected NAME=INTEGER")) from None
        if not name or out[name] <= 0:
            raise fail(ValueError(f"--cpu-size {pair!r}: expected NAME=INTEGER with a positive integer"))
    return out


def as_dict(message: Message) -> dict[str, object]:
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def print_json(value: object) -> None:
    """One JSON document on stdout, never wrapped (scripts parse it)."""
    typer.echo(json.dumps(value, indent=2, sort_keys=True))
