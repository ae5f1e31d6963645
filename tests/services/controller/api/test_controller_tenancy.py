"""Per-tenant limits against a real controller: one tenant's load never reaches another's calls."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pydantic import ValidationError

from controller_fakes import SPEC, controller, controller_settings, submit_request
from kevolve.config import CommonSettings
from kevolve.v1 import job_pb2, service_pb2, service_pb2_grpc
from services.controller.api.tenancy import FairPool, LimitExceeded, SubmitRate
from services.controller.config import ControllerSettings

ALICE = [("authorization", "Bearer tok-a")]
BOB = [("authorization", "Bearer tok-b")]
TOKENS = "tok-a=alice,tok-b=bob"
HANGING = SPEC.replace("import torch.nn as nn", "import torch.nn as nn\nimport time\ntime.sleep(1000)")


def _unique(source: str) -> str:
    # Specs that passed are remembered by source; a fresh comment makes this one probe again.
    return f"{source}\n# {uuid.uuid4().hex}\n"


async def _outcome(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    return grpc.StatusCode.OK, ""


async def test_hanging_specs_of_one_tenant_do_not_delay_another_tenants_submit(settings: CommonSettings,
                                                                              tmp_path: Path) -> None:
    cfg = controller_settings(tmp_path, tokens=TOKENS, spec_probe_timeout_s=60, spec_probe_workers=4,
                              spec_probes_per_tenant=2, spec_probe_queue_s=1)
    async with controller(settings, cfg) as ctl:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            stub = service_pb2_grpc.JobServiceStub(channel)
            # Bob's deadline (40 s) is below the probe timeout (60 s): his probes are cut to
            # fit it, so he hears that his spec hangs, not that his deadline expired. Alice's
            # own probe must end while his still hang: 6.5 s alone on a 2-core machine, 16 s
            # while the rest of the suite ran beside it (his 20 s deadline once left too little).
            started = time.monotonic()
            bob = [asyncio.create_task(_outcome(stub.SubmitJob(submit_request(source=_unique(HANGING)),
                                                               metadata=BOB, timeout=40)))
                   for _ in range(8)]
            for _ in range(200):
                if ctl.service.probes.running("bob") == 2:
                    break
                await asyncio.sleep(0.05)
            assert ctl.service.probes.running("bob") == 2
            alice_started = time.monotonic()
            job = (await stub.SubmitJob(submit_request(source=_unique(SPEC), budget=1), metadata=ALICE,
                                        timeout=90)).job
            alice_s = time.monotonic() - alice_started
            assert job.tenant == "alice" and job.state == job_pb2.RUNNING
            # Answered while bob's probes still hang: it never waited for them.
            assert ctl.service.probes.running("bob") == 2, alice_s
            outcomes = await asyncio.gather(*bob)
            bob_s = time.monotonic() - started
            assert bob_s < 40, outcomes
            hung = [detail for code, detail in outcomes if code == grpc.StatusCode.INVALID_ARGUMENT]
            refused = [detail for code, detail in outcomes if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert len(hung) == 2 and len(refused) == 6, outcomes
            for detail in hung:
                assert detail.startswith("spec.source") and "import" in detail, detail
                assert any(word in detail for word in ("timeout", "within", "did not finish")), detail
            for detail in refused:
                assert "KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT=2" in detail and "'bob'" in detail, detail
            assert ctl.service.probes.busy == 0


async def test_watch_streams_of_one_tenant_leave_other_tenants_and_health_alone(settings: CommonSettings,
                                                                               tmp_path: Path) -> None:
    cfg = controller_settings(tmp_path, tokens=TOKENS, watch_streams_per_tenant=4, calls_per_tenant=8,
                              max_concurrent_rpcs=16)
    async with controller(settings, cfg) as ctl:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            stub = service_pb2_grpc.JobServiceStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            bob_job = (await stub.SubmitJob(submit_request(budget=1), metadata=BOB, timeout=90)).job
            streams = [stub.WatchJob(service_pb2.WatchJobRequest(job_id=bob_job.job_id), metadata=BOB)
                       for _ in range(130)]

            async def first(stream: grpc.aio.UnaryStreamCall) -> tuple[grpc.StatusCode, str]:
                try:
                    event = await stream.read()
                    assert event.kind == "snapshot"
                    return grpc.StatusCode.OK, ""
                except grpc.aio.AioRpcError as exc:
                    return exc.code(), exc.details() or ""

            results = await asyncio.gather(*(first(s) for s in streams))
            open_streams = [s for s, (code, _) in zip(streams, results, strict=True) if code == grpc.StatusCode.OK]
            refused = [detail for code, detail in results if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert len(open_streams) == 4 and len(refused) == 126, results[:6]
            assert all("KEVOLVE_CONTROLLER_WATCH_STREAMS_PER_TENANT=4" in d for d in refused), refused[0]

            # Bob holds every stream he may; alice and the probes do not notice. Fifty health
            # checks at once pass a server-wide cap of 16: health is never counted.
            checks = await asyncio.gather(*(health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
                                            for _ in range(50)))
            assert {c.status for c in checks} <= {health_pb2.HealthCheckResponse.SERVING,
                                                  health_pb2.HealthCheckResponse.NOT_SERVING}
            alice_job = (await stub.SubmitJob(submit_request(budget=1), metadata=ALICE, timeout=90)).job
            assert (await stub.GetJob(service_pb2.GetJobRequest(job_id=alice_job.job_id), metadata=ALICE,
                                      timeout=10)).job.tenant == "alice"
            report = await stub.GetReport(service_pb2.GetReportRequest(job_id=alice_job.job_id), metadata=ALICE,
                                          timeout=60)
            assert alice_job.job_id in report.html
            alice_watch = stub.WatchJob(service_pb2.WatchJobRequest(job_id=alice_job.job_id), metadata=ALICE)
            assert (await alice_watch.read()).kind == "snapshot"
            alice_watch.cancel()

            # A stream bob closes gives its slot back.
            open_streams[0].cancel()
            for _ in range(100):
                again = stub.WatchJob(service_pb2.WatchJobRequest(job_id=bob_job.job_id), metadata=BOB)
                if (await first(again))[0] == grpc.StatusCode.OK:
                    again.cancel()
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("a closed stream never gave its slot back")
            for stream in open_streams[1:]:
                stream.cancel()


async def test_submit_rate_is_limited_per_tenant(settings: CommonSettings, tmp_path: Path) -> None:
    cfg = controller_settings(tmp_path, tokens=TOKENS, submit_burst=2, submit_rate_per_min=1)
    async with controller(settings, cfg) as ctl:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            stub = service_pb2_grpc.JobServiceStub(channel)
            for _ in range(2):
                await stub.SubmitJob(submit_request(budget=1), metadata=BOB, timeout=90)
            code, detail = await _outcome(stub.SubmitJob(submit_request(budget=1), metadata=BOB, timeout=90))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "KEVOLVE_CONTROLLER_SUBMIT_BURST=2" in detail and "KEVOLVE_CONTROLLER_SUBMIT_RATE_PER_MIN=1" \
                in detail and "retry in" in detail, detail
            # A request the static checks reject costs nothing.
            code, _ = await _outcome(stub.SubmitJob(submit_request(platform="tpu"), metadata=ALICE, timeout=30))
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            for _ in range(2):
                await stub.SubmitJob(submit_request(budget=1), metadata=ALICE, timeout=90)


def test_submit_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    rate = SubmitRate(per_min=6, burst=2, clock=lambda: now[0])
    rate.take("t")
    rate.take("t")
    with pytest.raises(LimitExceeded, match="retry in 10.0s"):
        rate.take("t")
    now[0] = 9.9
    with pytest.raises(LimitExceeded):
        rate.take("t")
    now[0] = 10.1
    rate.take("t")
    rate.take("other")   # buckets are per tenant


async def test_a_probe_keeps_its_slot_until_its_thread_ends_and_waiters_take_turns() -> None:
    pool = FairPool("probes", workers=3, per_tenant=2, workers_setting="W", per_tenant_setting="P")
    gates = {name: threading.Event() for name in ("b1", "b2", "c1", "a1", "a2")}
    order: list[str] = []

    def work(name: str) -> str:
        gates[name].wait(10)
        order.append(name)
        return name

    try:
        b1 = asyncio.create_task(pool.run("b", 5, work, "b1"))
        b2 = asyncio.create_task(pool.run("b", 5, work, "b2"))
        c1 = asyncio.create_task(pool.run("c", 5, work, "c1"))
        await asyncio.sleep(0.1)
        assert pool.busy == 3
        # Bob's cancelled call does not free his slot while its thread still runs.
        b1.cancel()
        await asyncio.sleep(0.1)
        assert pool.running("b") == 2 and pool.busy == 3
        a1 = asyncio.create_task(pool.run("a", 5, work, "a1"))
        a2 = asyncio.create_task(pool.run("a", 5, work, "a2"))
        b3 = asyncio.create_task(pool.run("b", 0.2, work, "b3"))
        with pytest.raises(LimitExceeded, match="P=2"):
            await b3
        gates["b1"].set()                 # the cancelled probe ends: its thread goes to alice
        await asyncio.sleep(0.2)
        assert pool.running("a") == 1 and pool.running("b") == 1
        gates["c1"].set()
        assert await c1 == "c1"
        await asyncio.sleep(0.2)
        assert pool.running("a") == 2
        for name in ("b2", "a1", "a2"):
            gates[name].set()
        assert [await b2, await a1, await a2] == ["b2", "a1", "a2"]
        assert pool.busy == 0 and order[0] == "b1"
    finally:
        for gate in gates.values():
            gate.set()
        pool.shutdown()


@pytest.mark.parametrize("overrides, named", [
    (dict(spec_probes_per_tenant=4, spec_probe_workers=4), "KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT"),
    (dict(spec_probe_timeout_s=90, spec_probe_queue_s=30), "KEVOLVE_CONTROLLER_MAX_DEADLINE_S"),
    (dict(reports_per_tenant=2, report_workers=2), "KEVOLVE_CONTROLLER_REPORTS_PER_TENANT"),
    (dict(calls_per_tenant=100, watch_streams_per_tenant=28, max_concurrent_rpcs=128),
     "KEVOLVE_CONTROLLER_MAX_CONCURRENT_RPCS"),
    (dict(submit_burst=0), "submit_burst"),
])
def test_limits_that_would_let_one_tenant_take_everything_are_refused(overrides: dict[str, object],
                                                                      named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        ControllerSettings(**overrides)  # type: ignore[arg-type]
