"""The evaluator as a service: `python -m services.evaluator` against a real nats-server."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from evaluator_helpers import FIXTURES
from metrics_page import metrics_with

from kevolve import subjects
from kevolve.exec import sandbox
from kevolve.bus import Bus
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2, evaluation_pb2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


METRICS_PORT = _free_port()


@pytest.fixture
def worker(service_env: dict[str, str], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = dict(
        service_env,
        KEVOLVE_EVALUATOR_METRICS_PORT=str(METRICS_PORT),
        KEVOLVE_EVALUATOR_PLATFORM="cpu",
        KEVOLVE_EVALUATOR_SCRATCH_DIR=str(tmp_path / "scratch"),
        KEVOLVE_EVALUATOR_TIMEOUT_S="120",
        KEVOLVE_EVALUATOR_WORKER_NAME="test-worker",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.evaluator"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def _results(bus: Bus, count: int, timeout: float) -> list[evaluation_pb2.EvaluationResult]:
    sub = await bus.js.pull_subscribe(subjects.EVALUATED, durable="test-evaluated", stream=subjects.STREAM)
    got: list[evaluation_pb2.EvaluationResult] = []
    deadline = asyncio.get_running_loop().time() + timeout
    while len(got) < count and asyncio.get_running_loop().time() < deadline:
        try:
            msgs = await sub.fetch(1, timeout=1)
        except Exception:  # nats timeout: keep polling until the deadline
            continue
        for msg in msgs:
            got.append(evaluation_pb2.EvaluationResult.FromString(msg.data))
            await msg.ack()
    return got


async def test_worker_evaluates_requests_and_survives_poison(
    settings: CommonSettings, store: LocalStore, worker: subprocess.Popen[bytes]
) -> None:
    spec_key = store.put((FIXTURES / "specs" / "softmax_small.py").read_bytes(), "specs", ".py")
    good_key = store.put(
        (FIXTURES / "kernels" / "correct" / "softmax_rowwise.py").read_bytes(), "kernels", ".py"
    )
    bus = await Bus.connect(settings, "test")
    subject = subjects.eval_subject("cpu")
    # Garbage bytes, a request naming objects that do not exist, one for another pool, then a
    # real one: the worker must answer the bad ones clearly and still evaluate the good one.
    await bus.js.publish(subject, b"\x00\xff not a protobuf")
    await bus.publish(
        subject,
        evaluation_pb2.EvaluationRequest(
            job_id="j",
            node_id="missing",
            platform="cpu",
            stage="full",
            spec_key=spec_key,
            candidate_key="kernels/" + "0" * 64 + ".py",
            seed=7,
            attempt="full:1",
        ),
    )
    await bus.publish(
        subject,
        evaluation_pb2.EvaluationRequest(
            job_id="j", node_id="wrong-pool", platform="cuda", spec_key=spec_key, candidate_key=good_key
        ),
    )
    await bus.publish(
        subject,
        evaluation_pb2.EvaluationRequest(
            job_id="j",
            node_id="good",
            platform="cpu",
            stage="screen",
            spec_key=spec_key,
            candidate_key=good_key,
            seed=11,
            attempt="screen:1",
        ),
    )
    results = {r.node_id: r for r in await _results(bus, 3, timeout=200)}
    assert worker.poll() is None, "the worker died"
    assert set(results) == {"missing", "wrong-pool", "good"}
    assert results["wrong-pool"].decided_by == "request:invalid" and "'cuda'" in results["wrong-pool"].reason

    missing = results["missing"]
    assert missing.verdict == common_pb2.INFRA_ERROR and missing.decided_by == "request:object"
    assert "kernels/000" in missing.reason and missing.attempt == "full:1"

    good = results["good"]
    assert good.verdict == common_pb2.PASSED, (good.decided_by, good.reason)
    assert good.stage == "screen" and good.attempt == "screen:1" and good.worker == "test-worker"
    assert good.fitness == 1.0 and good.cases[0].sizes["cols"] == 100
    report = json.loads(store.get(good.report_key))
    assert report["result"]["verdict"] == "PASSED"
    assert [c["name"] for c in report["checks"]][:2] == ["static", "reference"]
    assert report["kernels"] and report["kernels"][0]["name"] == "softmax_kernel"

    passed = 'kevolve_evaluator_evaluations_total{platform="cpu",stage="screen",verdict="PASSED"} 1.0'
    metrics = await metrics_with(METRICS_PORT, [passed])
    assert passed in metrics
    assert "kevolve_evaluator_seconds_count" in metrics and "kevolve_evaluator_busy" in metrics

    # Graceful stop: SIGTERM ends the worker cleanly.
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=30) == 0
    await bus.close()


def _sandboxed_processes(scratch: Path) -> list[psutil.Process]:
    """Processes working inside the worker's scratch directory: its sandboxed children."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and Path(proc.cwd()).is_relative_to(scratch):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


@pytest.mark.parametrize("warm_pool", ["true", "false"], ids=["warm-pool", "fresh-process"])
async def test_a_killed_worker_takes_its_sandboxed_children_along(
    settings: CommonSettings, store: LocalStore, service_env: dict[str, str], tmp_path: Path, warm_pool: str
) -> None:
    scratch = tmp_path / "scratch"
    env = dict(service_env, KEVOLVE_EVALUATOR_PLATFORM="cpu", KEVOLVE_EVALUATOR_SCRATCH_DIR=str(scratch),
               KEVOLVE_EVALUATOR_TIMEOUT_S="600", KEVOLVE_EVALUATOR_WARM_POOL=warm_pool)
    proc = subprocess.Popen([sys.executable, "-m", "services.evaluator"], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bus = await Bus.connect(settings, "test")
    try:
        spec_key = store.put((FIXTURES / "specs" / "softmax_small.py").read_bytes(), "specs", ".py")
        hang_key = store.put((FIXTURES / "kernels" / "adversarial" / "infinite_loop.py").read_bytes(),
                             "kernels", ".py")
        await bus.publish(subjects.eval_subject("cpu"), evaluation_pb2.EvaluationRequest(
            job_id="j", node_id="hang", platform="cpu", stage="full", spec_key=spec_key,
            candidate_key=hang_key, seed=5, attempt="full:1", tenant="t"))
        # Wait until the candidate runs: the reference is done and its run directory exists.
        deadline = time.monotonic() + 120
        runs = sandbox.tenant_dir(scratch / "runs", "t")
        while time.monotonic() < deadline and not (runs.is_dir() and any(runs.glob("*/plan.json"))):
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.0)
        assert _sandboxed_processes(scratch), "no sandboxed candidate process was seen running"
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _sandboxed_processes(scratch):
            await asyncio.sleep(0.2)
        left = _sandboxed_processes(scratch)
        assert not left, [(p.pid, p.cmdline()) for p in left]
    finally:
        if proc.poll() is None:
            proc.kill()
        await bus.close()
