"""A small gRPC client for JobService: channel, auth metadata, friendly errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import grpc

from kevolve.cli.launcher import find_running
from kevolve.v1 import job_pb2, service_pb2, service_pb2_grpc


class ClientError(RuntimeError):
    """A call failed; the message says why in the user's terms."""


def resolve_target(target: str | None, run_dir: Path) -> str:
    if target:
        return target
    if os.environ.get("KEVOLVE_TARGET"):
        return os.environ["KEVOLVE_TARGET"]
    state = find_running(run_dir)
    if state:
        return str(state["grpc_target"])
    raise ClientError(f"no kevolve is running under {run_dir} (start one with `kevolve up`, "
                      "or pass --target HOST:PORT / set KEVOLVE_TARGET)")


class JobClient:
    def __init__(self, target: str, token: str | None = None, timeout_s: float = 60.0) -> None:
        self.channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 64 << 20)])
        self.stub = service_pb2_grpc.JobServiceStub(self.channel)
        token = token or os.environ.get("KEVOLVE_TOKEN")
        self.metadata = [("authorization", f"Bearer {token}")] if token else []
        self.timeout_s = timeout_s

    def _call(self, method: str, request: object) -> object:
        try:
            return getattr(self.stub, method)(request, metadata=self.metadata, timeout=self.timeout_s)
        except grpc.RpcError as exc:
            raise ClientError(f"{method}: {exc.code().name}: {exc.details()}") from exc

    def submit(self, spec_path: Path, platform: str, config: job_pb2.JobConfig) -> job_pb2.Job:
        try:
            source = spec_path.read_text()
        except OSError as exc:
            raise ClientError(f"cannot read spec {spec_path}: {exc.strerror}") from exc
        spec = job_pb2.KernelSpec(name=spec_path.stem, source=source)
        request = service_pb2.SubmitJobRequest(spec=spec, platform=platform, config=config)
        return self._call("SubmitJob", request).job  # type: ignore[attr-defined,no-any-return]

    def get(self, job_id: str) -> job_pb2.Job:
        return self._call("GetJob", service_pb2.GetJobRequest(job_id=job_id)).job  # type: ignore[attr-defined,no-any-return]

    def cancel(self, job_id: str) -> job_pb2.Job:
        return self._call("CancelJob", service_pb2.CancelJobRequest(job_id=job_id)).job  # type: ignore[attr-defined,no-any-return]

    def candidates(self, job_id: str) -> list[job_pb2.Candidate]:
        reply = self._call("ListCandidates", service_pb2.ListCandidatesRequest(job_id=job_id))
        return list(reply.candidates)  # type: ignore[attr-defined]

    def best(self, job_id: str) -> service_pb2.GetBestKernelResponse:
        return self._call("GetBestKernel", service_pb2.GetBestKernelRequest(job_id=job_id))  # type: ignore[return-value]

    def artifact(self, job_id: str, key: str) -> bytes:
        return self._call("GetArtifact", service_pb2.GetArtifactRequest(job_id=job_id, key=key)).data  # type: ignore[attr-defined,no-any-return]

    def export(self, job_id: str) -> service_pb2.ExportJobResponse:
        return self._call("ExportJob", service_pb2.ExportJobRequest(job_id=job_id))  # type: ignore[return-value]

    def report(self, job_id: str) -> str:
        return self._call("GetReport", service_pb2.GetReportRequest(job_id=job_id)).html  # type: ignore[attr-defined,no-any-return]

    def watch(self, job_id: str) -> Iterator[job_pb2.JobEvent]:
        try:
            yield from self.stub.WatchJob(service_pb2.WatchJobRequest(job_id=job_id), metadata=self.metadata)
        except grpc.RpcError as exc:
            raise ClientError(f"WatchJob: {exc.code().name}: {exc.details()}") from exc

    def close(self) -> None:
        self.channel.close()


TERMINAL = {job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED}
