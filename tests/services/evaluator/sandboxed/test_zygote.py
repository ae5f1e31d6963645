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
