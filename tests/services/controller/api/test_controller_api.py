"""The gRPC API against a real controller on a free port (real nats-server, real DB)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from controller_fakes import SPEC, client, controller, controller_settings, submit_request
from kevolve.config import CommonSettings
from kevolve.client.natsd import NatsServer
from kevolve.v1 import job_pb2, service_pb2, service_pb2_grpc


async def _code(call: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call  # type: ignore[misc]
    return info.value.code(), info.value.details() or ""


async def test_submit_get_list_watch_cancel(settings: CommonSettings, tmp_path: Path) -> None:
    port_file = tmp_path / "ctl.port"
    async with controller(settings, controller_settings(tmp_path, port_file=port_file)) as ctl:
        assert int(port_file.read_text()) == ctl.port
        async with client(ctl.port) as stub:
            job = (await stub.SubmitJob(submit_request(budget=3), timeout=90)).job
            assert job.state == job_pb2.RUNNING and job.tenant == "default" and job.platform == "cpu"
            assert job.config.budget == 3 and job.config.parallelism == 2 and not job.fitness_is_speed
            assert job.spec.source_key.startswith("specs/")
            art = await stub.GetArtifact(service_pb2.GetArtifactRequest(job_id=job.job_id, key=job.spec.source_key))
            assert art.data.decode() == SPEC

            got = (await stub.GetJob(service_pb2.GetJobRequest(job_id=job.job_id))).job
            assert got.job_id == job.job_id and got.spec.name == "softmax"
            listed = (await stub.ListJobs(service_pb2.ListJobsRequest())).jobs
            assert [j.job_id for j in listed] == [job.job_id]

            watch = stub.WatchJob(service_pb2.WatchJobRequest(job_id=job.job_id))
            first = await watch.read()
            assert first.kind == "snapshot" and first.job.state == job_pb2.RUNNING

            cancelled = (await stub.CancelJob(service_pb2.CancelJobRequest(job_id=job.job_id))).job
            assert cancelled.state == job_pb2.CANCELLED and "cancelled" in cancelled.end_reason
            kinds = []
            while (event := await watch.read()) is not grpc.aio.EOF:
                kinds.append(event.kind)
            assert kinds[-1] == "ended"   # the stream closes when the job ends

            code, detail = await _code(stub.GetBestKernel(service_pb2.GetBestKernelRequest(job_id=job.job_id)))
            assert code == grpc.StatusCode.FAILED_PRECONDITION and "no passing candidate" in detail
            code, _ = await _code(stub.GetArtifact(service_pb2.GetArtifactRequest(
                job_id=job.job_id, key="kernels/" + "0" * 64 + ".py")))
            assert code == grpc.StatusCode.NOT_FOUND
            code, detail = await _code(stub.GetArtifact(service_pb2.GetArtifactRequest(
                job_id=job.job_id, key="../etc/passwd")))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "key" in detail
            code, _ = await _code(stub.GetJob(service_pb2.GetJobRequest(job_id="nope")))
            assert code == grpc.StatusCode.NOT_FOUND


BAD_SPECS = [
    (SPEC.replace("import torch.nn as nn", "import torch.nn as nn\nimport kevolve_no_such_module"),
     "ModuleNotFoundError: No module named 'kevolve_no_such_module'"),
    (SPEC.replace("return [torch.randn(batch_size, dim) * 4.0]", "return [1 / 0]"), "ZeroDivisionError"),
    (SPEC.replace("def get_inputs()", "def make_inputs()"), "lacks get_inputs"),
    (SPEC.replace("def forward(self, x", "def forward(self x"), "does not parse"),
]


async def test_bad_specs_and_fields_are_rejected_naming_the_problem(settings: CommonSettings,
                                                                    tmp_path: Path) -> None:
    async with controller(settings, controller_settings(tmp_path, max_spec_bytes=20_000)) as ctl:
        async with client(ctl.port) as stub:
            good = (await stub.SubmitJob(submit_request(budget=2), timeout=90)).job
            for source, expected in BAD_SPECS:
                code, detail = await _code(stub.SubmitJob(submit_request(source=source), timeout=90))
                assert code == grpc.StatusCode.INVALID_ARGUMENT, detail
                assert expected in detail and detail.startswith("spec.source"), detail
            bad_fields = [
                (submit_request(platform="tpu"), "platform"),
                (submit_request(platform=""), "platform"),
                (submit_request(budget=-1), "config.budget"),
                (submit_request(parallelism=10_000), "config.parallelism"),
                (submit_request(wall_clock_s=float("nan")), "config.wall_clock_s"),
                (submit_request(models=[""]), "config.models[0]"),
                (submit_request(source="x" * 30_000), "spec.source"),
                (submit_request(source=""), "spec.source"),
            ]
            sized = submit_request()
            sized.spec.cpu_sizes["not_a_size"] = 4
            bad_fields.append((sized, "spec.cpu_sizes['not_a_size']"))
            named = submit_request()
            named.spec.name = "../evil"
            bad_fields.append((named, "spec.name"))
            for req, field in bad_fields:
                code, detail = await _code(stub.SubmitJob(req, timeout=90))
                assert code == grpc.StatusCode.INVALID_ARGUMENT and detail.startswith(field), (field, detail)
            # Nothing already accepted was disturbed.
            jobs = (await stub.ListJobs(service_pb2.ListJobsRequest())).jobs
            assert [j.job_id for j in jobs] == [good.job_id] and jobs[0].state == job_pb2.RUNNING


async def test_tokens_authenticate_and_isolate_tenants(settings: CommonSettings, tmp_path: Path) -> None:
    cfg = controller_settings(tmp_path, tokens="tok-a=alice,tok-b=bob")
    async with controller(settings, cfg) as ctl:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            stub = service_pb2_grpc.JobServiceStub(channel)
            alice = [("authorization", "Bearer tok-a")]
            bob = [("authorization", "Bearer tok-b")]
            for metadata in (None, [("authorization", "Bearer wrong")], [("authorization", "tok-a")]):
                code, _ = await _code(stub.ListJobs(service_pb2.ListJobsRequest(), metadata=metadata))
                assert code == grpc.StatusCode.UNAUTHENTICATED
            watch = stub.WatchJob(service_pb2.WatchJobRequest(job_id="x"))
            code, _ = await _code(watch.read())
            assert code == grpc.StatusCode.UNAUTHENTICATED

            job = (await stub.SubmitJob(submit_request(budget=2), metadata=alice, timeout=90)).job
            assert job.tenant == "alice"
            assert (await stub.ListJobs(service_pb2.ListJobsRequest(), metadata=bob)).jobs == []
            for call in (stub.GetJob(service_pb2.GetJobRequest(job_id=job.job_id), metadata=bob),
                         stub.CancelJob(service_pb2.CancelJobRequest(job_id=job.job_id), metadata=bob),
                         stub.ListCandidates(service_pb2.ListCandidatesRequest(job_id=job.job_id), metadata=bob)):
                code, _ = await _code(call)
                assert code == grpc.StatusCode.NOT_FOUND
            got = (await stub.GetJob(service_pb2.GetJobRequest(job_id=job.job_id), metadata=alice)).job
            assert got.state == job_pb2.RUNNING   # bob's cancel did nothing
            # Health needs no token (probes).
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_health_follows_nats(nats_server: NatsServer, settings: CommonSettings, tmp_path: Path) -> None:
    import asyncio

    async with controller(settings, controller_settings(tmp_path)) as ctl:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service="kevolve.v1.JobService")

            async def status_becomes(want: int) -> None:
                for _ in range(100):
                    if (await health.Check(request)).status == want:
                        return
                    await asyncio.sleep(0.1)
                raise AssertionError(f"health never became {want}")

            # Known from the first request: a status, never NOT_FOUND while the first check runs.
            assert (await health.Check(request)).status in (health_pb2.HealthCheckResponse.SERVING,
                                                             health_pb2.HealthCheckResponse.NOT_SERVING)
            await status_becomes(health_pb2.HealthCheckResponse.SERVING)
            nats_server.stop(kill=True)
            await status_becomes(health_pb2.HealthCheckResponse.NOT_SERVING)


async def test_tls_serves_only_encrypted_clients(settings: CommonSettings, tmp_path: Path) -> None:
    import shutil
    import subprocess

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl CLI not installed (needed to make a throwaway certificate)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    async with controller(settings, controller_settings(tmp_path, tls_cert=cert, tls_key=key)) as ctl:
        creds = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        async with grpc.aio.secure_channel(f"127.0.0.1:{ctl.port}", creds) as channel:
            stub = service_pb2_grpc.JobServiceStub(channel)
            assert (await stub.ListJobs(service_pb2.ListJobsRequest(), timeout=10)).jobs == []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ctl.port}") as channel:
            code, _ = await _code(service_pb2_grpc.JobServiceStub(channel).ListJobs(
                service_pb2.ListJobsRequest(), timeout=5))
            assert code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
