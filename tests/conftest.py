"""Fixtures shared by the whole suite: real servers on free ports, fresh stores per test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kevolve.exec import interp_compat
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.client.natsd import NatsServer, nats_server_binary, start_nats
from kevolve.objstore import LocalStore

# The suite runs on machines without a GPU: Triton kernels run under its interpreter.
os.environ.setdefault("TRITON_INTERPRET", "1")
interp_compat.apply()  # KB samples and templates run in-process here too


def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        nats_server_binary()
    except FileNotFoundError as exc:  # fail fast with the fix, not 100 confusing errors
        pytest.exit(f"{exc}", returncode=3)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files holding system tests (``slow``: minutes each) run first, the rest in their
    order: the suite's files are dealt to its workers in collection order, and the longest
    ones dealt last kept one worker busy for minutes after the other had finished."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: order kept within each


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A real nats-server with JetStream, on a free port, with its own store dir."""
    server = start_nats(tmp_path / "nats", log_file=tmp_path / "nats.log")
    yield server
    server.stop()


@pytest.fixture
def settings(nats_server: NatsServer, tmp_path: Path) -> CommonSettings:
    """Common settings pointing at this test's server and a fresh local object store."""
    return CommonSettings(
        nats_url=nats_server.url,
        objects_url=str(tmp_path / "objects"),
        kb_dir=REPO_ROOT / "kb",
        ack_wait_s=5.0,
        max_deliver=3,
    )


@pytest.fixture
def store(settings: CommonSettings) -> LocalStore:
    return LocalStore(Path(settings.objects_url))


@pytest.fixture
def service_env(settings: CommonSettings) -> dict[str, str]:
    """Environment for starting a service as a separate process against this test's servers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEVOLVE_")}
    env.update(
        KEVOLVE_NATS_URL=settings.nats_url,
        KEVOLVE_OBJECTS_URL=settings.objects_url,
        KEVOLVE_KB_DIR=str(settings.kb_dir),
        KEVOLVE_ACK_WAIT_S=str(settings.ack_wait_s),
        KEVOLVE_MAX_DELIVER=str(settings.max_deliver),
        PYTHONPATH=str(REPO_ROOT),
        PYTHONUNBUFFERED="1",
        TRITON_INTERPRET="1",
    )
    return env


PYTHON = sys.executable
