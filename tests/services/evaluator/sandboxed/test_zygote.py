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
    def stuck(requests: int, ready: int, hint: str) -> None:   # never says it is ready
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


def _plan(tmp_path: Any, name: str, spec: str) -> str:
    run = tmp_path / name
    run.mkdir()
    (run / "spec.py").write_text(spec)
    return str(run / "plan.json")


def _serve_with(monkeypatch: pytest.MonkeyPatch, spare: zygote._Spare, plan: str, req_id: str) -> dict[str, Any]:
    replies: list[dict[str, Any]] = []
    monkeypatch.setattr(zygote, "_reply", replies.append)
    monkeypatch.setattr(zygote, "_SPARE", spare)
    monkeypatch.setattr(zygote, "_SPARE_TAKEN", __import__("threading").Event())
    zygote._serve({"id": req_id, "mode": "candidate", "plan": plan, "timeout_s": 30,
                   "memory_mb": 4096, "max_procs": 16})
    return replies[0]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """Spares build ahead by writing what they were given (and printing, as a spec may)."""
    log = tmp_path / "built"

    def build(plan: Any, source: bytes) -> None:
        print("a spec that prints while its baselines are built")
        log.write_text(f"{os.getpid()} {plan} {source.decode()}")

    def run(req: dict[str, Any]) -> None:
        (tmp_path / f"ran-{req['id']}").write_text(str(os.getpid()))

    monkeypatch.setattr(zygote.child, "build_ahead", build)
    monkeypatch.setattr(zygote, "_run", run)
    return log


def test_a_spare_builds_the_baselines_of_the_request_before_it_and_runs_one_of_the_same_spec(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, built: Any, capfd: pytest.CaptureFixture[str],
) -> None:
    first = _plan(tmp_path, "first", "SPEC = 1\n")
    monkeypatch.setattr(zygote, "_HINT", first)
    spare = zygote._fork_spare()
    assert spare is not None and spare.spec == zygote.ahead.spec_digest(b"SPEC = 1\n")
    monkeypatch.setattr(zygote, "_GPU", True)   # a GPU pool's zygote names the next spare's request
    reply = _serve_with(monkeypatch, spare, _plan(tmp_path, "second", "SPEC = 1\n"), "r5")
    assert reply["returncode"] == 0 and not reply["killed_for"]
    assert built.read_text() == f"{spare.pid} {first} SPEC = 1\n"
    assert (tmp_path / "ran-r5").read_text() == str(spare.pid)          # the request ran in it
    assert zygote._HINT.endswith("second/plan.json")                    # the next spare builds for it
    assert "prints" not in capfd.readouterr().out                       # nothing reached the replies


def test_a_request_of_another_spec_never_runs_in_a_spare_that_loaded_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, built: Any,
) -> None:
    monkeypatch.setattr(zygote, "_HINT", _plan(tmp_path, "job_a", "SPEC = 'a'\n"))
    spare = zygote._fork_spare()
    assert spare is not None
    reply = _serve_with(monkeypatch, spare, _plan(tmp_path, "job_b", "SPEC = 'b'\n"), "r6")
    assert reply["returncode"] == 0 and not reply["killed_for"]
    ran = int((tmp_path / "ran-r6").read_text())
    assert ran != spare.pid                                             # a fresh child ran it
    with pytest.raises(ChildProcessError):
        os.waitpid(spare.pid, os.WNOHANG)                               # the spare is gone, reaped


def test_a_spare_still_building_its_baselines_gives_its_request_to_a_fresh_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
) -> None:
    def hang(plan: Any, source: bytes) -> None:
        time.sleep(3600)

    monkeypatch.setattr(zygote.child, "build_ahead", hang)
    monkeypatch.setattr(zygote, "_run", lambda req: (tmp_path / "ran").write_text(str(os.getpid())))
    monkeypatch.setattr(zygote, "AHEAD_S", 0.5)
    monkeypatch.setattr(zygote, "_HINT", _plan(tmp_path, "job", "SPEC = 1\n"))
    spare = zygote._fork_spare()
    assert spare is not None
    started = time.monotonic()
    reply = _serve_with(monkeypatch, spare, _plan(tmp_path, "next", "SPEC = 1\n"), "r7")
    assert reply["returncode"] == 0 and time.monotonic() - started < 10
    assert int((tmp_path / "ran").read_text()) != spare.pid
