"""`kevolve up` as an operator runs it: it stays up, and a stop leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kevolve.config import REPO_ROOT

pytestmark = pytest.mark.slow


def test_up_serves_and_a_double_sigterm_still_stops_every_service(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    up = subprocess.Popen([sys.executable, "-m", "kevolve.client.main", "up", "--run-dir", str(run_dir), "--port", "0"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "state.json").exists():
            assert up.poll() is None, up.stdout.read().decode() if up.stdout else ""
            assert time.monotonic() < deadline, "kevolve up never reported ready"
            time.sleep(0.2)
        state = json.loads((run_dir / "state.json").read_text())
        status = subprocess.run([sys.executable, "-m", "kevolve.client.main", "status", "no-such-job",
                                 "--run-dir", str(run_dir)], env=env, capture_output=True, text=True, timeout=60)
        assert status.returncode == 1 and "NOT_FOUND" in status.stderr   # the API answers
        children = psutil.Process(up.pid).children(recursive=True)
        assert len(children) >= 6   # nats-server, controller, retriever, generator, evaluator, profiler
        # A wrapper (timeout, a supervisor) forwarding its own SIGTERM sends a second one.
        up.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=90)
        gone, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, [p.cmdline() for p in alive]
        assert not (run_dir / "state.json").exists() and state["grpc_target"]
    finally:
        if up.poll() is None:   # a failed assertion must not leave servers behind
            for child in psutil.Process(up.pid).children(recursive=True):
                child.kill()
            up.kill()


def test_up_starts_several_workers_for_a_pool_each_with_its_own_scratch(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    up = subprocess.Popen([sys.executable, "-m", "kevolve.client.main", "up", "--run-dir", str(run_dir), "--port", "0",
                           "--platform", "mtia-sim", "--workers", "2"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    logs = [run_dir / "logs" / f"{name}.log" for name in ("evaluator-mtia-sim", "evaluator-mtia-sim-2")]
    try:
        deadline = time.monotonic() + 180
        while not all(log.exists() and "evaluator ready" in log.read_text() for log in logs):
            assert up.poll() is None, up.stdout.read().decode() if up.stdout else ""
            assert time.monotonic() < deadline, [log.read_text()[-2000:] for log in logs if log.exists()]
            time.sleep(0.5)
        # Both serve the pool's subject; the cpu screening pool keeps one worker.
        assert all("subject=kv.work.eval.mtia-sim" in log.read_text() for log in logs)
        assert not (run_dir / "logs" / "evaluator-cpu-2.log").exists()
        scratch = [p.environ().get("KEVOLVE_EVALUATOR_SCRATCH_DIR", "")
                   for p in psutil.Process(up.pid).children(recursive=True) if "services.evaluator" in p.cmdline()]
        assert len(set(scratch)) == len(scratch) == 3, scratch
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(timeout=90)
        except subprocess.TimeoutExpired:
            for child in psutil.Process(up.pid).children(recursive=True):
                child.kill()
            up.kill()
