"""`kevolve up`'s supervisor: what dies is restarted, with growing delays, and said so."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.client.launcher import Backoff, LocalSystem, ServiceProcess
from kevolve.config import CommonSettings
from kevolve.client.natsd import NatsServer, start_nats
from kevolve.v1 import work_pb2


def test_backoff_restarts_at_once_then_doubles_and_forgives_a_stable_run() -> None:
    backoff = Backoff(first_s=1, max_s=5, stable_s=60)
    assert [backoff.after_death(lived_s=2) for _ in range(6)] == [0, 1, 2, 4, 5, 5]
    assert backoff.after_death(lived_s=61) == 0     # it ran fine for a minute: a fresh start


def test_a_service_that_keeps_dying_is_restarted_with_growing_delays_naming_its_log(
        nats_server: NatsServer, tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    system = LocalSystem(run_dir=tmp_path, nats=nats_server)
    log = tmp_path / "logs" / "flaky.log"
    flaky = ServiceProcess("flaky", [sys.executable, "-c", "import sys; sys.exit(3)"], dict(os.environ), log,
                           backoff=Backoff(first_s=0.3, max_s=0.6))
    system.services.append(flaky)
    flaky.start()
    messages: list[str] = []
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        messages += [e.message for e in system.supervise_once() if e.name == "flaky"]
        time.sleep(0.02)
    flaky.stop()
    assert messages[0] == f"flaky exited with code 3; restarted it (see {log})"
    assert messages[1] == f"flaky exited with code 3 (2 times in a row); restarting it in 0.3s (see {log})"
    assert messages[2] == f"restarted flaky (see {log})"
    assert f"(3 times in a row); restarting it in 0.6s (see {log})" in messages[3]
    assert all("restarting it in 0.6s" in m for m in messages[5::2])   # capped
    # Fewer restarts than a tight loop would make: the delays were kept.
    assert 4 <= flaky.restarts <= 9, messages
    assert messages[1] in (tmp_path / "logs" / "up.log").read_text()


def test_a_misconfigured_service_is_not_restarted_and_its_variable_is_named(tmp_path: Path) -> None:
    """A service started with an invalid setting exits with EX_CONFIG naming the environment
    variable (not the settings field); the supervisor stops there, saying so, instead of
    restarting it forever."""
    import subprocess

    from kevolve.config import EXIT_CONFIG, REPO_ROOT

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "KEVOLVE_EVALUATOR_CONCURRENCY": "lots"}
    run = subprocess.run([sys.executable, "-m", "services.evaluator"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == EXIT_CONFIG
    assert "invalid setting KEVOLVE_EVALUATOR_CONCURRENCY" in run.stderr and "'lots'" in run.stderr
    assert "Traceback" not in run.stderr

    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "evaluator-cpu.log"
    log.write_text(run.stderr)
    system = LocalSystem(run_dir=tmp_path, nats=None)  # type: ignore[arg-type]
    svc = ServiceProcess("evaluator-cpu", [sys.executable, "-c", f"import sys; sys.exit({EXIT_CONFIG})"],
                         dict(os.environ), log)
    svc.start()
    svc.process.wait()  # type: ignore[union-attr]
    events = system._supervise(svc)
    assert len(events) == 1 and events[0].fatal and svc.restarts == 0
    assert "cannot start: evaluator: invalid setting KEVOLVE_EVALUATOR_CONCURRENCY" in events[0].message


async def test_a_killed_nats_server_comes_back_on_its_port_with_its_work(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    nats = start_nats(tmp_path / "nats", log_file=tmp_path / "logs" / "nats.log")
    system = LocalSystem(run_dir=tmp_path, nats=nats)
    settings = CommonSettings(nats_url=nats.url, objects_url=str(tmp_path / "objects"))
    try:
        bus = await Bus.connect(settings, "test")
        await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="accepted"), msg_id="accepted")
        await bus.close()
        nats.process.kill()
        nats.process.wait()
        events = await asyncio.to_thread(system.supervise_once)
        assert [e.name for e in events] == ["nats-server", "nats-server"]
        assert events[0].message.startswith(f"nats-server exited with code -9; restarting it on port {nats.port}")
        assert f"restarted nats-server on port {nats.port}" in events[1].message
        assert system.nats.port == nats.port and system.nats.process.poll() is None
        bus = await Bus.connect(settings, "test")    # the URL every service has still works
        info = await bus.js.stream_info(subjects.STREAM)
        assert info.state.messages == 1               # and the accepted work is still queued
        await bus.close()
        assert await asyncio.to_thread(system.supervise_once) == []
    finally:
        system.nats.stop()


def test_state_follows_the_controllers_port(nats_server: NatsServer, tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    system = LocalSystem(run_dir=tmp_path, nats=nats_server, grpc_target="127.0.0.1:4000")
    system.port_file.write_text("4001\n")
    events = system.supervise_once()
    assert [e.message for e in events] == ["the controller now serves on 127.0.0.1:4001"]
    assert json.loads((tmp_path / "state.json").read_text())["grpc_target"] == "127.0.0.1:4001"
    assert system.supervise_once() == []
