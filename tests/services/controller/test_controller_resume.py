"""Killing a real controller process mid-job and restarting it loses no node and duplicates none."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import func, select

from controller_fakes import Fakes, client, submit_request
from kevolve.client.natsd import free_port
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, service_pb2, work_pb2
from services.controller.store import db
from services.controller.store.models import ExpansionRow, JobRow, NodeRow


def _start(env: dict[str, str], tmp_path: Path, n: int) -> tuple[subprocess.Popen[bytes], Path]:
    port_file = tmp_path / f"port.{n}"
    env = dict(env, KEVOLVE_CONTROLLER_PORT_FILE=str(port_file))
    log = open(tmp_path / f"controller.{n}.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "services.controller"], cwd=REPO_ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, port_file


async def _port(proc: subprocess.Popen[bytes], port_file: Path, tmp_path: Path) -> int:
    for _ in range(600):
        if port_file.exists():
            return int(port_file.read_text())
        if proc.poll() is not None:
            logs = "\n".join(p.read_text()[-3000:] for p in tmp_path.glob("controller.*.log"))
            raise AssertionError(f"controller exited with {proc.returncode}:\n{logs}")
        await asyncio.sleep(0.05)
    raise TimeoutError("controller never wrote its port file")


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return reply.read().decode()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@pytest.mark.timeout(240)
async def test_killed_controller_resumes_without_losing_or_duplicating_nodes(
        settings: CommonSettings, service_env: dict[str, str], tmp_path: Path, db_url: str) -> None:
    async def gen(req: work_pb2.ExpandRequest) -> str | None:
        await asyncio.sleep(0.3)
        return None

    async def evaluate(req: evaluation_pb2.EvaluationRequest) -> tuple[int, float]:
        await asyncio.sleep(0.1)
        seq = int(req.node_id.rsplit("-n", 1)[1])
        return (common_pb2.PASSED, 1.0) if seq % 3 else (common_pb2.INCORRECT, 0.0)

    url = db_url
    env = dict(service_env, KEVOLVE_CONTROLLER_DATABASE_URL=url, KEVOLVE_CONTROLLER_GRPC_PORT="0",
               KEVOLVE_CONTROLLER_GRPC_HOST="127.0.0.1")
    budget = 10
    fakes = Fakes(settings, gen=gen, evaluate=evaluate)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        async with fakes.running():
            proc, port_file = _start(env, tmp_path, 0)
            procs.append(proc)
            async with client(await _port(proc, port_file, tmp_path)) as stub:
                job = (await stub.SubmitJob(submit_request(budget=budget, parallelism=2, seed=3), timeout=120)).job
            # Kill it at different points of the job: each time with work in flight.
            metrics_port = free_port()
            for n, after in enumerate((2, 5, 8), start=1):
                while len(fakes.expands) < after:
                    await asyncio.sleep(0.02)
                _kill(proc)
                if n == 3:
                    env["KEVOLVE_CONTROLLER_METRICS_PORT"] = str(metrics_port)
                proc, port_file = _start(env, tmp_path, n)
                procs.append(proc)
                port = await _port(proc, port_file, tmp_path)
            async with client(port) as stub:
                deadline = asyncio.get_running_loop().time() + 120
                while True:
                    done = (await stub.GetJob(service_pb2.GetJobRequest(job_id=job.job_id), timeout=10)).job
                    if done.state != job_pb2.RUNNING:
                        break
                    assert asyncio.get_running_loop().time() < deadline, done
                    await asyncio.sleep(0.1)
            scraped = await asyncio.to_thread(_scrape, metrics_port)
            assert 'kevolve_controller_jobs{state="SUCCEEDED"} 1.0' in scraped
            assert "kevolve_controller_candidates_total" in scraped
            proc.send_signal(signal.SIGTERM)   # the graceful path too
            assert proc.wait(timeout=30) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                _kill(p)

    assert done.state == job_pb2.SUCCEEDED and done.end_reason == "budget", done
    engine = db.make_engine(url)
    with db.session_factory(engine)() as s:
        nodes = s.scalars(select(NodeRow).where(NodeRow.job_id == job.job_id).order_by(NodeRow.seq)).all()
        exps = s.scalars(select(ExpansionRow).where(ExpansionRow.job_id == job.job_id)).all()
        row = s.get(JobRow, job.job_id)
        assert row is not None
        assert len(nodes) == budget and [n.seq for n in nodes] == list(range(budget))
        assert sorted(n.expansion_id for n in nodes) == sorted(e.id for e in exps)   # one node per expansion
        assert all(e.status == "returned" and e.published for e in exps)
        assert sorted(e.decision for e in exps) == list(range(budget)) and row.decisions == budget
        assert all(n.verdict in (common_pb2.PASSED, common_pb2.INCORRECT) for n in nodes)
        assert (row.candidates, row.evaluated) == (budget, budget)
        assert row.passed == sum(n.verdict == common_pb2.PASSED for n in nodes)
        assert s.scalar(select(func.count()).select_from(NodeRow)) == budget
    engine.dispose()
    # The generator was asked for exactly the budgeted expansions, never one more.
    assert {e.expansion_id for e in fakes.expands} == {e.id for e in exps}
