"""A small gRPC client for JobService: channel, auth metadata, friendly errors."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc

from kevolve.client.launcher import find_running
from kevolve.v1 import job_pb2, service_pb2, service_pb2_grpc


# A submission waits for a probe slot and probes the spec on the controller; the controller
# answers within its own cap (KEVOLVE_CONTROLLER_MAX_DEADLINE_S, 120 s by default, which its
# settings keep above the probe's timeout and queue), so this deadline never expires first.
SUBMIT_TIMEOUT_S = 150.0
CALL_TIMEOUT_S = 60.0
# How long following a job waits for an unreachable controller to come back (a restart under
# `kevolve up` takes seconds; its backoff after repeated crashes up to 30 s).
RECONNECT_S = 300.0
# Codes a call can fail with while the controller restarts or its address changes.
TRANSIENT = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN,
                       grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED})


class ClientError(RuntimeError):
    """A call failed; the message says why in the user's terms."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code

    @property
    def transient(self) -> bool:
        return self.code in TRANSIENT


def read_source(path: Path) -> str:
    """A spec or kernel file as text; ClientError in one line when it is not readable UTF-8 text."""
    try:
        data = path.read_bytes()
    except IsADirectoryError as exc:
        raise ClientError(f"{path} is a directory, not a Python file") from exc
    except OSError as exc:
        raise ClientError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClientError(f"{path} is not UTF-8 text (byte {exc.start} is not valid UTF-8)") from exc
    if "\x00" in text:
        raise ClientError(f"{path} is not text (it contains NUL bytes)")
    return text


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
    def __init__(self, target: str, token: str | None = None, timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 64 << 20)])
        self.stub = service_pb2_grpc.JobServiceStub(self.channel)
        token = token or os.environ.get("KEVOLVE_TOKEN")
        self.metadata = [("authorization", f"Bearer {token}")] if token else []
        self.timeout_s = timeout_s

    def _call(self, method: str, request: object, timeout_s: float | None = None) -> object:
        try:
            return getattr(self.stub, method)(request, metadata=self.metadata, timeout=timeout_s or self.timeout_s)
        except grpc.RpcError as exc:
            raise ClientError(f"{method}: {exc.code().name}: {exc.details()}", exc.code()) from exc

    def submit(self, spec_path: Path, platform: str, config: job_pb2.JobConfig) -> job_pb2.Job:
        return self.submit_source(spec_path.stem, read_source(spec_path), platform, config)

    def submit_source(self, name: str, source: str, platform: str, config: job_pb2.JobConfig,
                      cpu_sizes: dict[str, int] | None = None, atol: float = 0.0, rtol: float = 0.0) -> job_pb2.Job:
        spec = job_pb2.KernelSpec(name=name, source=source, cpu_sizes=cpu_sizes or {}, atol=atol, rtol=rtol)
        request = service_pb2.SubmitJobRequest(spec=spec, platform=platform, config=config)
        return self._call("SubmitJob", request, SUBMIT_TIMEOUT_S).job  # type: ignore[attr-defined,no-any-return]

    def get(self, job_id: str) -> job_pb2.Job:
        return self._call("GetJob", service_pb2.GetJobRequest(job_id=job_id)).job  # type: ignore[attr-defined,no-any-return]

    def cancel(self, job_id: str) -> job_pb2.Job:
        return self._call("CancelJob", service_pb2.CancelJobRequest(job_id=job_id)).job  # type: ignore[attr-defined,no-any-return]

    def candidates(self, job_id: str) -> list[job_pb2.Candidate]:
        reply = self._call("ListCandidates", service_pb2.ListCandidatesRequest(job_id=job_id))
        return list(reply.candidates)  # type: ignore[attr-defined]

    def list_jobs(self, limit: int = 0) -> list[job_pb2.Job]:
        return list(self._call("ListJobs", service_pb2.ListJobsRequest(limit=limit)).jobs)  # type: ignore[attr-defined]

    def approve(self, job_id: str, node_id: str) -> job_pb2.Candidate:
        request = service_pb2.ApproveCandidateRequest(job_id=job_id, node_id=node_id)
        return self._call("ApproveCandidate", request).candidate  # type: ignore[attr-defined,no-any-return]

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
            raise ClientError(f"WatchJob: {exc.code().name}: {exc.details()}", exc.code()) from exc

    def close(self) -> None:
        self.channel.close()


TERMINAL = {job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED}


def follow_events(connect: Callable[[], JobClient], job_id: str, on_outage: Callable[[str], None] | None = None,
                  give_up_s: float = RECONNECT_S) -> Iterator[job_pb2.JobEvent]:
    """A job's events until it ends, across restarts of the controller.

    When the stream breaks (or closes before the job ended), ``connect`` is called again
    after a growing pause, so the target is resolved anew (``state.json`` follows a restarted
    controller), and the watch resumes with a fresh snapshot of the job. Errors that a
    reconnect cannot cure (an unknown job, a bad token) are raised at once.
    """
    client: JobClient | None = None
    lost_at: float | None = None
    pause = 0.5
    try:
        while True:
            try:
                if client is None:
                    client = connect()
                for event in client.watch(job_id):
                    lost_at, pause = None, 0.5
                    yield event
                    if event.kind == "ended" or event.job.state in TERMINAL:
                        return
                raise ClientError("WatchJob: the stream closed before the job ended", grpc.StatusCode.UNAVAILABLE)
            except ClientError as exc:
                # No running system found (state.json being rewritten) is as passing as a refused call.
                if exc.code is not None and not exc.transient:
                    raise
                now = time.monotonic()
                if lost_at is None:
                    lost_at = now
                    if on_outage is not None:
                        on_outage(f"lost the controller ({exc}); reconnecting")
                elif now - lost_at > give_up_s:
                    raise ClientError(f"the controller stayed unreachable for {give_up_s:.0f}s: {exc}",
                                      exc.code) from exc
                if client is not None:
                    client.close()
                    client = None
                time.sleep(pause)
                pause = min(2 * pause, 5.0)
    finally:
        if client is not None:
            client.close()
