"""The zygote's own bookkeeping of the children it forks (the rest is tested through the
harness): a child stuck in the fork itself is found, killed and reported as such, not left to
hold the zygote's answer forever."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from services.evaluator.sandboxed import zygote


def test_a_child_stuck_before_its_own_session_is_killed_and_reported_as_a_fork_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replies: list[dict[str, Any]] = []

    def stuck(req: dict[str, Any]) -> None:  # never reaches os.setsid, as if deadlocked in an after-fork handler
        try:
            time.sleep(3600)
        finally:
            os._exit(0)

    monkeypatch.setattr(zygote, "_child", stuck)
    monkeypatch.setattr(zygote, "_reply", replies.append)
    monkeypatch.setattr(zygote, "FORK_START_S", 0.5)
    started = time.monotonic()
    zygote._serve({"id": "r1", "mode": "candidate", "plan": "/nonexistent/plan.json", "timeout_s": 60,
                   "memory_mb": 4096, "max_procs": 16})
    assert time.monotonic() - started < 10     # not the 60 s deadline, and not forever
    assert replies and replies[0]["id"] == "r1" and replies[0]["killed_for"] == "fork"


def test_a_child_past_its_deadline_is_killed_with_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    replies: list[dict[str, Any]] = []

    def slow(req: dict[str, Any]) -> None:
        try:
            os.setsid()
            time.sleep(3600)
        finally:
            os._exit(0)

    monkeypatch.setattr(zygote, "_child", slow)
    monkeypatch.setattr(zygote, "_reply", replies.append)
    zygote._serve({"id": "r2", "mode": "candidate", "plan": "/nonexistent/plan.json", "timeout_s": 1.0,
                   "memory_mb": 4096, "max_procs": 16})
    assert replies[0]["killed_for"] == "timeout" and replies[0]["duration_s"] < 10


def test_a_request_runs_in_the_spare_forked_ahead_of_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # A child is forked before its request comes (on a GPU pool it starts its CUDA context
    # then); the request runs in it, and the reply is the one a freshly forked child gives.
    replies: list[dict[str, Any]] = []
    ran = tmp_path / "ran"

    def run(req: dict[str, Any]) -> None:
        ran.write_text(f"{os.getpid()} {req['id']}")

    monkeypatch.setattr(zygote, "_run", run)
    monkeypatch.setattr(zygote, "_reply", replies.append)
    spare = zygote._fork_spare()
    assert spare is not None and os.getpgid(spare.pid) == spare.pid   # in its own session, waiting
    assert not ran.exists()
    monkeypatch.setattr(zygote, "_SPARE", spare)
    monkeypatch.setattr(zygote, "_SPARE_TAKEN", __import__("threading").Event())
    zygote._serve({"id": "r3", "mode": "candidate", "plan": "/nonexistent/plan.json", "timeout_s": 30,
                   "memory_mb": 4096, "max_procs": 16})
    assert ran.read_text() == f"{spare.pid} r3"
    assert replies[0]["id"] == "r3" and replies[0]["returncode"] == 0 and not replies[0]["killed_for"]
    assert zygote._SPARE is None and zygote._SPARE_TAKEN.is_set()     # the keeper forks the next


def test_a_spare_that_never_starts_is_killed_and_requests_fork_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(requests: int, ready: int) -> None:   # never says it is ready
        try:
            time.sleep(3600)
        finally:
            os._exit(0)

    monkeypatch.setattr(zygote, "_spare_child", stuck)
    monkeypatch.setattr(zygote, "FORK_START_S", 0.5)
    started = time.monotonic()
    assert zygote._fork_spare() is None
    assert time.monotonic() - started < 10
    assert zygote._take_spare() is None       # a request then forks a child of its own


def test_a_child_holds_no_end_of_the_next_spares_request_pipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # Else a candidate could write a request of its own choosing to the spare that runs the
    # next candidate (and keep it from ever seeing the end of its real one).
    seen = tmp_path / "seen"
    spare = zygote._fork_spare()
    assert spare is not None
    try:
        def run(req: dict[str, Any]) -> None:
            try:
                os.fstat(spare.requests)
                seen.write_text("open")
            except OSError:
                seen.write_text("closed")

        monkeypatch.setattr(zygote, "_run", run)
        monkeypatch.setattr(zygote, "_reply", lambda message: None)
        zygote._serve({"id": "r4", "mode": "candidate", "plan": "/nonexistent/plan.json", "timeout_s": 30,
                       "memory_mb": 4096, "max_procs": 16})   # no spare published: a fresh fork
        assert seen.read_text() == "closed"
    finally:
        zygote._kill(spare.pid)
        os.waitpid(spare.pid, 0)
        zygote._close_private(spare.requests)
