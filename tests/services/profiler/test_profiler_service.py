"""The profiler as a real process against a real nats-server: ProfileRequest in, ProfileResult out."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.objstore import LocalStore
from kevolve.v1 import profile_pb2

DATA = Path(__file__).parent / "data"
EXAMPLES = REPO_ROOT / "examples"


@pytest.fixture
async def bus(settings: CommonSettings) -> AsyncIterator[Bus]:
    b = await Bus.connect(settings, "test-profiler")
    yield b
    await b.close()


@pytest.fixture
def start_profiler(service_env: dict[str, str], tmp_path: Path) -> "Callable[[str], subprocess.Popen[bytes]]":
    procs: list[subprocess.Popen[bytes]] = []

    def start(platform: str) -> subprocess.Popen[bytes]:
        env = {**service_env, "KEVOLVE_PROFILER_PLATFORM": platform,
               "KEVOLVE_PROFILER_SCRATCH_DIR": str(tmp_path / f"scratch-{platform}")}
        log = open(tmp_path / f"profiler-{platform}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "services.profiler"], cwd=REPO_ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _results(bus: Bus, count: int, timeout: float = 120) -> list[profile_pb2.ProfileResult]:
    sub = await bus.js.pull_subscribe(subjects.PROFILED, durable="ctl-profiled", stream=subjects.STREAM)
    got: list[profile_pb2.ProfileResult] = []
    deadline = asyncio.get_running_loop().time() + timeout
    while len(got) < count and asyncio.get_running_loop().time() < deadline:
        try:
            msgs = await sub.fetch(1, timeout=2)
        except Exception:  # nothing yet
            continue
        for msg in msgs:
            got.append(profile_pb2.ProfileResult.FromString(msg.data))
            await msg.ack()
    assert len(got) == count, f"expected {count} ProfileResults, got {len(got)}"
    return got


def _put(store: LocalStore, path: Path, prefix: str) -> str:
    return store.put(path.read_bytes(), prefix, ".py")


async def test_cpu_pool_reports_interpreter_counts_without_times(
        bus: Bus, store: LocalStore, start_profiler: Callable[[str], subprocess.Popen[bytes]], tmp_path: Path) -> None:
    spec_key = _put(store, EXAMPLES / "gelu_scale_add.py", "specs")
    unfused = _put(store, DATA / "gelu_unfused.py", "kernels")
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-unfused", platform="cpu", spec_key=spec_key, candidate_key=unfused))
    # Bad input is answered, not dropped: a candidate key naming nothing.
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-missing", platform="cpu", spec_key=spec_key, candidate_key="kernels/" + "0" * 64 + ".py"))
    # A candidate that crashes: an error result carrying its traceback.
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nclass ModelNew(torch.nn.Module):\n"
                      "    def __init__(self, scale):\n        super().__init__()\n"
                      "    def forward(self, x, y):\n        raise RuntimeError('kernel exploded')\n")
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-broken", platform="cpu", spec_key=spec_key, candidate_key=_put(store, broken, "kernels")))
    # A request for another pool, and nonsense sizes: answered with what is wrong.
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-wrong-pool", platform="cuda", spec_key=spec_key, candidate_key=unfused))
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-bad-sizes", platform="cpu", spec_key=spec_key, sizes={"rows": -3}))
    # No candidate: the reference itself, as eager aten ops.
    await bus.publish(subjects.profile_subject("cpu"), profile_pb2.ProfileRequest(
        job_id="j1", node_id="n-ref", platform="cpu", spec_key=spec_key))
    start_profiler("cpu")
    results = {r.node_id: r for r in await _results(bus, 6)}

    ok = results["n-unfused"]
    assert ok.error == "" and ok.platform == "cpu" and ok.tools == ["interpreter"]
    t = 64 * 1024 * 4  # spec's cpu_shapes: 64 x 1024 fp32
    assert ok.metrics["launches"] == 3 and ok.metrics["kernel_count"] == 3
    assert ok.metrics["bytes_read"] == 4 * t and ok.metrics["bytes_written"] == 3 * t
    assert "kernel_time_us" not in ok.metrics and "sim_time_us" not in ok.metrics  # no invented times
    assert any("timing" in u for u in ok.unavailable)
    assert "reads 2.0x the input bytes" in ok.summary
    report = json.loads(store.get(ok.report_key))
    assert report["result"]["nodeId"] == "n-unfused"
    launches = report["details"]["observed"]["launches"]
    assert [r["name"] for r in launches] == ["gelu_kernel", "scale_kernel", "add_kernel"]
    assert launches[0]["grid"] == [64, 1, 1] and launches[0]["sfu_elems"] == {"erf": 64 * 1024}

    bad = results["n-missing"]
    assert "candidate_key" in bad.error and "names no object" in bad.error and bad.report_key

    assert "'cuda'" in results["n-wrong-pool"].error and "'cpu' profiler pool" in results["n-wrong-pool"].error
    assert "sizes must be positive: rows=-3" in results["n-bad-sizes"].error

    crashed = results["n-broken"]
    assert "kernel exploded" in crashed.error and crashed.bottleneck == "unknown"
    assert "kernel exploded" in json.loads(store.get(crashed.report_key))["details"]["traceback"]

    ref = results["n-ref"]
    assert ref.error == "" and ref.metrics["launches"] == 3  # gelu, mul, add: one pass each
    assert ref.metrics["bytes_read"] == 4 * t and ref.metrics["bytes_written"] == 3 * t
    assert "gelu, mul, add" in ref.summary


async def test_mtia_sim_pool_reports_estimate_utilization_and_sram_overflow(
        bus: Bus, store: LocalStore, start_profiler: Callable[[str], subprocess.Popen[bytes]]) -> None:
    gelu_spec = _put(store, EXAMPLES / "gelu_scale_add.py", "specs")
    wide_spec = _put(store, DATA / "softmax_wide.py", "specs")
    subject = subjects.profile_subject("mtia-sim")
    await bus.publish(subject, profile_pb2.ProfileRequest(
        job_id="j2", node_id="fused", platform="mtia-sim", spec_key=gelu_spec,
        candidate_key=_put(store, DATA / "gelu_fused.py", "kernels"), sizes={"rows": 256, "cols": 1024}))
    await bus.publish(subject, profile_pb2.ProfileRequest(
        job_id="j2", node_id="huge", platform="mtia-sim", spec_key=wide_spec,
        candidate_key=_put(store, DATA / "softmax_huge_block.py", "kernels")))
    start_profiler("mtia-sim")
    results = {r.node_id: r for r in await _results(bus, 2)}

    fused = results["fused"]
    assert fused.error == "" and fused.tools == ["interpreter", "mtia-sim"]
    assert fused.bottleneck == "memory_bound"
    for key in ("sim_time_us", "util_dram", "util_vector", "util_sfu", "util_pe", "sram_bytes_per_block"):
        assert key in fused.metrics
    assert fused.metrics["sram_limit_bytes"] == 256 * 1024
    assert 0 < fused.metrics["util_sfu"] < fused.metrics["util_dram"] <= 1
    base = json.loads(store.get(fused.report_key))["details"]["observed"]["baseline_estimate"]
    assert [e["name"] for e in base["launches"]] == ["aten::gelu", "aten::mul", "aten::add"]
    assert fused.metrics["sim_time_us"] < base["time_us"]
    assert "baseline" in fused.summary and "simulated" in fused.summary

    huge = results["huge"]
    assert huge.error == "" and huge.bottleneck == "sram_overflow"
    assert huge.metrics["sram_bytes_per_block"] > huge.metrics["sram_limit_bytes"]
    assert "softmax_kernel" in huge.summary and "32768" in huge.summary


def test_unknown_platform_or_bad_setting_stops_the_service_with_the_reason(service_env: dict[str, str]) -> None:
    for key, value, reason in (("KEVOLVE_PROFILER_PLATFORM", "tpu-v9", "unknown platform 'tpu-v9'"),
                               ("KEVOLVE_PROFILER_TIMEOUT_S", "-1", "invalid setting KEVOLVE_PROFILER_TIMEOUT_S")):
        env = {**service_env, "KEVOLVE_PROFILER_PLATFORM": "cpu", key: value}
        proc = subprocess.run([sys.executable, "-m", "services.profiler"], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0 and reason in proc.stderr
