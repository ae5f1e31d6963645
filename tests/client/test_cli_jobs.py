"""The job commands of the `kevolve` CLI against a real controller (real NATS, SQLite, gRPC)
with scripted generator and evaluator pools: every JobConfig option reaches the job, JSON
output parses, list/watch/approve work, and a run dir is found from any folder."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2

# The controller's scripted pools live beside the controller's tests.
sys.path.insert(0, str(REPO_ROOT / "tests" / "services" / "controller"))
from controller_fakes import Fakes, controller, controller_settings  # noqa: E402

SPEC = REPO_ROOT / "examples" / "softmax.py"


async def _cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "kevolve.client.main", *args, cwd=cwd,
                                                env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_every_job_option_reaches_the_job_and_list_watch_approve_work(settings: CommonSettings,
                                                                            tmp_path: Path) -> None:
    async def suspicious_first(req: evaluation_pb2.EvaluationRequest) -> tuple[int, float]:
        if req.node_id.endswith("-n0"):
            return common_pb2.SUSPICIOUS, 14.0
        await asyncio.sleep(3)  # the job is still running when `watch` attaches
        return common_pb2.PASSED, 1.3

    fakes = Fakes(settings, evaluate=suspicious_first)
    async with fakes.running(), controller(settings, controller_settings(tmp_path)) as ctl:
        target = f"127.0.0.1:{ctl.port}"
        code, out, err = await _cli(
            "submit", str(SPEC), "--target", target, "--no-follow", "-o", "json", "--budget", "3",
            "--policy", "mcts", "--uct-c", "0.9", "--parallelism", "1", "--seed", "5", "--no-reuse",
            "--wall-clock-s", "600", "--max-tokens", "100000", "--max-cost-usd", "2.5", "--patience", "7",
            "--target-speedup", "9.5", "--islands", "3", "--migration-interval", "4", "--model", "m-a",
            "--model", "m-b", "--skip-screening", "--cuda-graphs", "--allow-tf32", "--cpu-size", "batch_size=4",
            "--atol", "0.001", "--rtol", "0.002")
        assert code == 0, err
        job = json.loads(out)
        config = job["config"]
        assert (config["budget"], config["policy"], config["parallelism"], config["seed"]) == (3, "MCTS", 1, "5")
        assert config["no_reuse"] is True and config["skip_screening"] is True and config["models"] == ["m-a", "m-b"]
        assert (config["wall_clock_s"], config["max_tokens"], config["max_cost_usd"]) == (600.0, "100000", 2.5)
        assert (config["patience"], config["target_speedup"], config["uct_c"]) == (7, 9.5, 0.9)
        assert (config["islands"], config["migration_interval"]) == (3, 4)
        assert config["cuda_graphs"] is True and config["allow_tf32"] is True
        assert job["spec"]["cpu_sizes"] == {"batch_size": "4"}
        assert (job["spec"]["atol"], job["spec"]["rtol"]) == (0.001, 0.002)
        job_id = job["job_id"]

        # `watch` re-attaches to the running job and exits 0 once it succeeds.
        code, out, err = await _cli("watch", job_id, "--target", target)
        assert code == 0, err + out
        assert "SUCCEEDED" in out and "node n0" in out and "SUSPICIOUS" in out

        code, out, _ = await _cli("list", "--target", target, "-o", "json")
        assert code == 0 and job_id in [j["job_id"] for j in json.loads(out)]
        code, out, _ = await _cli("candidates", job_id, "--target", target, "-o", "json")
        nodes = {n["node_id"].removeprefix(job_id + "-"): n for n in json.loads(out)}
        assert nodes["n0"]["verdict"] == "SUSPICIOUS" and not nodes["n0"]["approved"]

        # A passed node needs no approval: the error names why, on one line.
        code, _, err = await _cli("approve", job_id, "n1", "--target", target)
        assert code == 1 and "error:" in err and err.count("\n") == 1
        code, out, err = await _cli("approve", job_id, "n0", "--target", target)
        assert code == 0, err
        code, out, _ = await _cli("status", job_id, "--target", target, "-o", "json")
        assert json.loads(out)["best_node_id"] == f"{job_id}-n0"  # approved: now the best (14x)

        # A job for a platform no pool serves is refused by its choices before anything runs.
        code, _, err = await _cli("submit", str(SPEC), "--target", target, "--platform", "tpu", "--no-follow")
        assert code == 2 and "tpu" in err


async def test_the_default_run_dir_does_not_depend_on_the_working_folder(tmp_path: Path) -> None:
    """`kevolve status` run from another folder looks where `kevolve up` (from any folder)
    keeps its state, and says so when nothing runs there."""
    env_dir = {k: v for k, v in os.environ.items() if k != "KEVOLVE_RUN_DIR"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kevolve.client.cli_common import DEFAULT_RUN_DIR; print(DEFAULT_RUN_DIR)",
        cwd=tmp_path, env={**env_dir, "PYTHONPATH": str(REPO_ROOT)}, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    assert Path(out.decode().strip()) == REPO_ROOT / ".kevolve"
    code, _, err = await _cli("status", "some-job", "--run-dir", str(tmp_path / "nothing"), cwd=tmp_path)
    assert code == 2 and str(tmp_path / "nothing") in err
    assert job_pb2.JobState.Name(job_pb2.RUNNING) == "RUNNING"
