"""The generator as a real process against a real nats-server: requests in, candidates out."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.client.natsd import free_port
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2, work_pb2
from metrics_page import metrics_with

UNRECOGNIZED = '''
import torch
import torch.nn as nn

n = 16

class Model(nn.Module):
    def forward(self, x):
        return torch.fft.fft(x).real

def get_inputs():
    return [torch.randn(n, n)]

def get_init_inputs():
    return []
'''


LOG: dict[str, Path] = {}


def _log_tail() -> str:
    path = LOG.get("path")
    return path.read_text(errors="replace")[-3000:] if path and path.exists() else ""


@pytest.fixture
def metrics_port() -> int:
    return free_port()


@pytest.fixture
def generator(service_env: dict[str, str], tmp_path: Path, metrics_port: int) -> Iterator[subprocess.Popen[bytes]]:
    LOG["path"] = tmp_path / "generator.log"
    log = open(LOG["path"], "wb")
    env = {**service_env, "KEVOLVE_GENERATOR_BACKEND": "offline", "KEVOLVE_GENERATOR_METRICS_PORT": str(metrics_port)}
    proc = subprocess.Popen([sys.executable, "-m", "services.generator"], env=env, cwd=REPO_ROOT,
                            stdout=log, stderr=subprocess.STDOUT)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def _request(store: LocalStore, source: str, expansion_id: str) -> work_pb2.GenerateRequest:
    spec_key = store.put(source.encode(), "specs", ".py")
    prompt_key = store.put(b"# prompt text the offline backend ignores", "prompts", ".md")
    request = work_pb2.GenerateRequest(prompt_key=prompt_key, retrieved_docs=["samples/softmax"])
    request.expand.job_id = "job-1"
    request.expand.expansion_id = expansion_id
    request.expand.spec_key = spec_key
    request.expand.generation = 1
    request.expand.seed = 7
    request.expand.context_mode = common_pb2.PARENT_TRAJECTORY
    request.diagnosis.category = "first_draft"
    return request


async def _collect(bus: Bus, count: int, timeout: float = 90) -> list[work_pb2.CandidateGenerated]:
    """Consume kv.work.candidate the way the controller does, until `count` arrived."""
    got: list[work_pb2.CandidateGenerated] = []
    stop = asyncio.Event()

    async def handler(msg: work_pb2.CandidateGenerated, delivery: Delivery) -> None:
        got.append(msg)
        if len(got) >= count:
            stop.set()

    consumer = bus.consumer(subjects.CANDIDATE, work_pb2.CandidateGenerated, handler)
    try:
        await asyncio.wait_for(consumer.run(stop), timeout=timeout)
    except TimeoutError:
        pass
    return got


async def test_candidate_arrives_with_code_in_store(settings: CommonSettings, store: LocalStore,
                                                    generator: subprocess.Popen[bytes], metrics_port: int) -> None:
    bus = await Bus.connect(settings, "test")
    source = (REPO_ROOT / "examples" / "softmax.py").read_text()
    await bus.publish(subjects.GENERATE, _request(store, source, "exp-1"), msg_id="exp-1")
    await bus.publish(subjects.GENERATE, _request(store, UNRECOGNIZED, "exp-2"), msg_id="exp-2")
    got = {m.expansion_id: m for m in await _collect(bus, 2)}
    await bus.close()
    assert set(got) == {"exp-1", "exp-2"}, f"generator exited with {generator.poll()}: {_log_tail()}"

    good = got["exp-1"]
    assert good.error == "" and good.code_key.startswith("kernels/") and good.code_key.endswith(".py")
    code = store.get(good.code_key).decode()
    assert "class ModelNew" in code and "@triton.jit" in code
    assert good.backend == "offline" and good.job_id == "job-1" and good.generation == 1
    assert good.tunables["template"] == "row_fused"
    assert good.diagnosis.category == "first_draft" and list(good.retrieved_docs) == ["samples/softmax"]

    bad = got["exp-2"]
    assert bad.code_key == "" and "no kernel lowering" in bad.error and "fft" in bad.error

    wanted = ['kevolve_generator_candidates_total{backend="offline",outcome="code"} 1.0',
              'kevolve_generator_candidates_total{backend="offline",outcome="no_code"} 1.0']
    metrics = await metrics_with(metrics_port, wanted)
    assert all(line in metrics for line in wanted), [m for m in metrics.splitlines() if "candidates_total" in m]
    assert "kevolve_generator_seconds_count" in metrics


async def test_missing_spec_object_gives_up_with_an_error(settings: CommonSettings, store: LocalStore,
                                                          generator: subprocess.Popen[bytes]) -> None:
    bus = await Bus.connect(settings, "test")
    request = _request(store, UNRECOGNIZED, "exp-3")
    request.expand.spec_key = "specs/" + "0" * 64 + ".py"  # never stored
    await bus.publish(subjects.GENERATE, request, msg_id="exp-3")
    got = await _collect(bus, 1, timeout=60)
    await bus.close()
    assert len(got) == 1 and got[0].code_key == ""
    assert "after 3 attempts" in got[0].error and "specs/000" in got[0].error


def test_bad_backend_setting_fails_at_start(service_env: dict[str, str]) -> None:
    env = {**service_env, "KEVOLVE_GENERATOR_BACKEND": "gpt-magic"}
    proc = subprocess.run([sys.executable, "-m", "services.generator"], env=env, cwd=REPO_ROOT,
                          capture_output=True, timeout=60)
    assert proc.returncode != 0
    assert b"KEVOLVE_GENERATOR_BACKEND" in proc.stderr or b"backend" in proc.stderr
