"""The retriever as a real process against a real nats-server: ExpandRequest in, GenerateRequest out."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from retriever_helpers import eval_report, expand_request, node, profile_report

from kevolve import promptdoc, subjects
from kevolve.bus import Bus
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2, work_pb2


@pytest.fixture
def retriever(service_env: dict[str, str], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    log = open(tmp_path / "retriever.log", "wb")
    env = dict(service_env, KEVOLVE_RETRIEVER_TOKEN_BUDGET="2000")
    proc = subprocess.Popen([sys.executable, "-m", "services.retriever"], cwd=REPO_ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


async def _take(bus: Bus, subject: str, message_type: type, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    sub = await bus.consumer(subject, message_type, _never).subscribe()
    msgs = await sub.fetch(1, timeout=timeout)
    await msgs[0].ack()
    return message_type.FromString(msgs[0].data)


async def _never(*_: object) -> None:  # the test fetches by hand
    raise AssertionError("unused")


async def test_expand_request_becomes_generate_request(settings: CommonSettings, store: LocalStore,
                                                       retriever: subprocess.Popen[bytes]) -> None:
    parent = node(store, "n-parent", common_pb2.PASSED, fitness=0.8, report=eval_report("PASSED"),
                  profile=profile_report("memory_bound", {"dram_bw_frac": 0.35}))
    request = expand_request(store, parent, platform="cuda")
    bus = await Bus.connect(settings, "test")
    try:
        await bus.publish(subjects.EXPAND, request, msg_id=request.expansion_id)
        generate = await _take(bus, subjects.GENERATE, work_pb2.GenerateRequest)
    finally:
        await bus.close()
    assert generate.expand == request
    assert generate.diagnosis.category == "slow" and generate.diagnosis.bottleneck == "memory_bound"
    doc = promptdoc.parse(store.get(generate.prompt_key).decode())
    assert doc.meta["retrieved_docs"] == list(generate.retrieved_docs)
    assert any(d.startswith("guidance/memory-coalescing-and-vectorization.md#") for d in generate.retrieved_docs)
    assert any(d.startswith("hardware/nvidia-hopper/") for d in generate.retrieved_docs)
    assert "Performance bottleneck: memory_bound" in doc.user
    assert retriever.poll() is None


async def test_unservable_request_is_answered_not_dropped(settings: CommonSettings, store: LocalStore,
                                                          retriever: subprocess.Popen[bytes]) -> None:
    request = expand_request(store, None, platform="no-such-chip")
    bus = await Bus.connect(settings, "test")
    try:
        await bus.publish(subjects.EXPAND, request, msg_id=request.expansion_id)
        answer = await _take(bus, subjects.CANDIDATE, work_pb2.CandidateGenerated)
    finally:
        await bus.close()
    assert answer.expansion_id == "exp-1" and not answer.code_key
    assert "unknown platform 'no-such-chip'" in answer.error
    assert retriever.poll() is None
