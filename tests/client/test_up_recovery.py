"""`kevolve up` recovering from the deaths of nats-server and the controller, as seen from outside."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kevolve.client.jobclient import TERMINAL, JobClient
from kevolve.config import REPO_ROOT
from kevolve.v1 import job_pb2
from up_process import kevolve_up

SOFTMAX = REPO_ROOT / "examples" / "softmax.py"


def _wait_for_end(client: JobClient, job_id: str, timeout_s: float) -> job_pb2.Job:
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(job_id)
        if job.state in TERMINAL:
            return job
        assert time.monotonic() < deadline, f"job {job_id} did not end within {timeout_s}s: {job}"
        time.sleep(1)


def test_a_killed_nats_server_is_restarted_and_the_job_still_completes(tmp_path: Path) -> None:
    with kevolve_up(tmp_path) as up:
        nats_url = up.state()["nats_url"]
        client = JobClient(str(up.state()["grpc_target"]))
        job = client.submit(SOFTMAX, "cpu", job_pb2.JobConfig(budget=2, parallelism=1, seed=3, no_reuse=True))
        deadline = time.monotonic() + 120
        while client.get(job.job_id).candidates == 0:   # work is on its way through the bus
            assert time.monotonic() < deadline, "no candidate was ever generated"
            time.sleep(0.2)
        up.service("nats-server").kill()
        up.wait_for_output("restarted nats-server on port", 60)
        assert "nats-server exited with code -9" in up.text()
        assert up.state()["nats_url"] == nats_url
        job = _wait_for_end(client, job.job_id, 300)
        assert job.state == job_pb2.SUCCEEDED, job
        client.close()


def test_a_killed_controller_under_port_0_keeps_its_port_and_submit_follows_to_success(tmp_path: Path) -> None:
    with kevolve_up(tmp_path) as up:
        target = up.state()["grpc_target"]
        output = tmp_path / "submit.out"
        with open(output, "wb") as out:
            submit = subprocess.Popen([sys.executable, "-m", "kevolve.client.main", "submit", str(SOFTMAX), "--budget",
                                       "2", "--parallelism", "1", "--no-reuse", "--run-dir", str(up.run_dir)],
                                      env=up.env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while "submitted job" not in output.read_text():
                assert submit.poll() is None, output.read_text()
                assert time.monotonic() < deadline, output.read_text()
                time.sleep(0.1)
            job_id = output.read_text().split("submitted job", 1)[1].split()[0]
            time.sleep(1)   # the watch is open
            up.service("services.controller").kill()
            up.wait_for_output("controller exited with code -9", 30)
            assert submit.wait(timeout=300) == 0, output.read_text()
        finally:
            if submit.poll() is None:
                submit.kill()
        followed = output.read_text()
        assert "lost the controller" in followed and "SUCCEEDED" in followed, followed
        assert up.state()["grpc_target"] == target      # the restarted controller kept its port
        status = up.cli("status", job_id)
        assert status.returncode == 0 and "SUCCEEDED" in status.stdout, status.stderr
