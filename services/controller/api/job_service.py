"""JobService: the public gRPC API. A tenant sees, watches and cancels only its own jobs."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar

import grpc
import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from kevolve.objstore import ObjectNotFound, ObjectStore, check_key
from kevolve.platforms import get_platform
from kevolve.specfile import SpecError, SpecOutline, check_outline, parse
from kevolve.v1 import common_pb2, job_pb2, service_pb2, service_pb2_grpc
from services.controller.config import PROBE_REPLY_MARGIN_S, ControllerSettings
from services.controller.engine import reuse
from services.controller.engine.engine import Engine
from services.controller.outputs.job import export_job, report_job
from services.controller.store.convert import artifact_keys, config_to_dict, job_to_proto, node_to_proto
from services.controller.store.models import JobRow, NodeRow

from . import specprobe
from .specprobe import unknown_cpu_sizes
from .auth import Auth
from .tenancy import FairPool, LimitExceeded, SubmitRate
from .validation import InvalidField, check_request, check_sizes_against

log = structlog.get_logger("controller.api")

T = TypeVar("T")

MAX_LIST = 1000
# A probe never gets less than this, however little of the caller's deadline is left.
MIN_PROBE_S = 1.0

# Said with every job so nobody reads a simulated estimate as a measured GPU speedup.
FITNESS_UNITS = {
    "measured": "speedup over torch.compile, measured",
    "simulated": "simulated speedup over the reference's unfused operators (machine-model estimate)",
    "none": "correctness only (1 = passed; this platform gives no speed)",
}


def stored_spec(spec: job_pb2.KernelSpec, outline: SpecOutline,
                derived: dict[str, int] | None = None) -> job_pb2.KernelSpec:
    """The spec settings a job keeps (its source is stored apart): the request's, completed
    with what the spec itself declares (cpu_shapes, atol, rtol), else the screening sizes the
    probe derived."""
    return job_pb2.KernelSpec(test_cases=spec.test_cases,
                              cpu_sizes=dict(spec.cpu_sizes) or outline.cpu_sizes or derived or {},
                              atol=spec.atol or (outline.atol or 0.0), rtol=spec.rtol or (outline.rtol or 0.0))


class JobService(service_pb2_grpc.JobServiceServicer):
    def __init__(self, settings: ControllerSettings, factory: sessionmaker[Session], store: ObjectStore,
                 engine: Engine, auth: Auth, kb_dir: Path) -> None:
        self.settings = settings
        self.factory = factory
        self.store = store
        self.engine = engine
        self.auth = auth
        self.kb_dir = kb_dir
        # Work that can take long gets threads of its own, shared fairly between tenants, never
        # the event loop's default executor (which every call's quick object-store reads use):
        # a tenant's hanging specs or piles of reports then hold that tenant's slots only.
        self.probes = FairPool("spec probes", settings.spec_probe_workers, settings.spec_probes_per_tenant,
                               "KEVOLVE_CONTROLLER_SPEC_PROBE_WORKERS", "KEVOLVE_CONTROLLER_SPEC_PROBES_PER_TENANT")
        self.renders = FairPool("exports and reports", settings.report_workers, settings.reports_per_tenant,
                                "KEVOLVE_CONTROLLER_REPORT_WORKERS", "KEVOLVE_CONTROLLER_REPORTS_PER_TENANT")
        self.submit_rate = SubmitRate(settings.submit_rate_per_min, settings.submit_burst)

    def close(self) -> None:
        self.probes.shutdown()
        self.renders.shutdown()

    def _load_own(self, job_id: str, tenant: str) -> JobRow | None:
        # Sessions never stay open across an await: on SQLite a transaction holds the write
        # lock, and another coroutine of this thread waiting for it would block the loop.
        with self.factory() as s:
            job = s.get(JobRow, job_id) if job_id else None
            return job if job is not None and job.tenant == tenant else None

    async def _own_job(self, job_id: str, context: grpc.aio.ServicerContext) -> JobRow:
        job = self._load_own(job_id, self.auth.tenant(context))
        if job is None:
            # The same answer for "absent" and "someone else's": ids reveal nothing.
            await context.abort(grpc.StatusCode.NOT_FOUND, f"job {job_id!r} not found")
        assert job is not None
        return job

    async def SubmitJob(self, request: service_pb2.SubmitJobRequest,
                        context: grpc.aio.ServicerContext) -> service_pb2.SubmitJobResponse:
        tenant = self.auth.tenant(context)
        try:
            checked = check_request(request, self.settings, self.kb_dir)
        except InvalidField as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        spec = request.spec
        try:
            # Cheap static checks first, on the one parse of the spec; only a spec that passes
            # them is executed (sandboxed), and only those count against the submit rate.
            tree = parse(spec.source)
            outline = check_outline(tree)
            check_sizes_against(spec, outline.sizes)
            unknown_cpu_sizes(outline, dict(spec.cpu_sizes))
            self.submit_rate.take(tenant)
            probed = await self._probe(tenant, spec, outline, context)
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except SpecError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"spec.source: {exc}")
        except InvalidField as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        source_key = await asyncio.to_thread(self.store.put, spec.source.encode("utf-8"), "specs", ".py")
        platform = get_platform(self.kb_dir, checked.platform)
        config = config_to_dict(checked.config)
        config["fitness_is_speed"] = platform.fitness_is_speed
        config["fitness_unit"] = FITNESS_UNITS[platform.speed]
        fingerprint = specprobe.fingerprint(tree)
        job_id = uuid.uuid4().hex[:16]
        with self.factory.begin() as s:
            reused_from = "" if checked.config.no_reuse else reuse.find_reusable(
                s, tenant=tenant, fingerprint=fingerprint, platform=checked.platform, sizes=outline.sizes,
                factor=self.settings.reuse_size_factor)
            job = JobRow(
                id=job_id, tenant=tenant, spec_name=checked.name, spec_source_key=source_key,
                spec_fingerprint=fingerprint, spec_sizes=dict(outline.sizes),
                spec_message=stored_spec(spec, outline, probed.screening_sizes).SerializeToString(),
                platform=checked.platform, config=config, state=job_pb2.RUNNING,
                fitness_is_speed=platform.fitness_is_speed, reused_from=reused_from,
            )
            s.add(job)
        log.info("job submitted", job_id=job_id, tenant=tenant, platform=checked.platform, spec=checked.name,
                 reused_from=reused_from or None)
        await self.engine.start_job(job_id)
        with self.factory() as s:
            row = s.get(JobRow, job_id)
            assert row is not None
            return service_pb2.SubmitJobResponse(job=job_to_proto(row))

    async def _probe(self, tenant: str, spec: job_pb2.KernelSpec, outline: SpecOutline,
                     context: grpc.aio.ServicerContext) -> specprobe.ProbeResult:
        """Probe on the tenant's share of the probe pool, ending before the caller's deadline.

        The wait for a slot and the probe itself both fit in what is left of the call (the
        caller's deadline or the server's cap) less a margin for the reply, so a spec that
        hangs is answered with the step that did not finish, not with an expired deadline.
        """
        remaining = context.time_remaining()
        limit = self.settings.max_deadline_s if remaining is None else min(remaining, self.settings.max_deadline_s)
        ends_at = time.monotonic() + limit - PROBE_REPLY_MARGIN_S
        timeout = self.settings.spec_probe_timeout_s
        wait_s = min(self.settings.spec_probe_queue_s, max(0.0, ends_at - time.monotonic() - timeout))
        sizes = dict(spec.cpu_sizes)

        def probe() -> specprobe.ProbeResult:
            # Timed from when the probe starts, after any wait for a slot.
            left = ends_at - time.monotonic()
            return specprobe.probe(spec.source, sizes, max(MIN_PROBE_S, min(timeout, left)), outline=outline)

        return await self.probes.run(tenant, wait_s, probe)

    async def GetJob(self, request: service_pb2.GetJobRequest,
                     context: grpc.aio.ServicerContext) -> service_pb2.GetJobResponse:
        return service_pb2.GetJobResponse(job=job_to_proto(await self._own_job(request.job_id, context)))

    async def WatchJob(self, request: service_pb2.WatchJobRequest,
                       context: grpc.aio.ServicerContext) -> AsyncIterator[job_pb2.JobEvent]:
        await self._own_job(request.job_id, context)
        # Subscribe before the snapshot so no event falls between the two.
        queue = self.engine.hub.subscribe(request.job_id)
        try:
            with self.factory() as s:
                job = s.get(JobRow, request.job_id)
                assert job is not None
                snapshot = job_to_proto(job)
            yield job_pb2.JobEvent(job_id=job.id, at=job.updated_at, kind="snapshot", job=snapshot)
            if snapshot.state in (job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED):
                return
            while True:
                event = await queue.get()
                yield event
                if event.kind == "ended":
                    return
        finally:
            self.engine.hub.unsubscribe(request.job_id, queue)

    async def CancelJob(self, request: service_pb2.CancelJobRequest,
                        context: grpc.aio.ServicerContext) -> service_pb2.CancelJobResponse:
        await self._own_job(request.job_id, context)
        job = await self.engine.finish(request.job_id, f"cancelled by {self.auth.tenant(context)}", cancelled=True)
        assert job is not None
        return service_pb2.CancelJobResponse(job=job_to_proto(job))

    async def ListCandidates(self, request: service_pb2.ListCandidatesRequest,
                             context: grpc.aio.ServicerContext) -> service_pb2.ListCandidatesResponse:
        if request.limit < 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "limit: must be >= 0")
        await self._own_job(request.job_id, context)
        with self.factory() as s:
            query = select(NodeRow).where(NodeRow.job_id == request.job_id).order_by(NodeRow.seq)
            if request.passed_only:
                query = query.where(NodeRow.verdict == common_pb2.PASSED)
            if request.limit:
                query = query.limit(request.limit)
            return service_pb2.ListCandidatesResponse(candidates=[node_to_proto(n) for n in s.scalars(query)])

    async def GetBestKernel(self, request: service_pb2.GetBestKernelRequest,
                            context: grpc.aio.ServicerContext) -> service_pb2.GetBestKernelResponse:
        job = await self._own_job(request.job_id, context)
        with self.factory() as s:
            node = s.get(NodeRow, job.best_node_id) if job.best_node_id else None
        if node is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"job {job.id} has no passing candidate yet ({job.candidates} generated)")
        assert node is not None
        code = (await asyncio.to_thread(self.store.get, node.code_key)).decode("utf-8", "replace")
        return service_pb2.GetBestKernelResponse(candidate=node_to_proto(node), code=code, platform=job.platform)

    async def ListJobs(self, request: service_pb2.ListJobsRequest,
                       context: grpc.aio.ServicerContext) -> service_pb2.ListJobsResponse:
        if request.limit < 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "limit: must be >= 0")
        limit = min(request.limit or 100, MAX_LIST)
        with self.factory() as s:
            rows = s.scalars(select(JobRow).where(JobRow.tenant == self.auth.tenant(context))
                             .order_by(JobRow.created_at.desc()).limit(limit)).all()
            return service_pb2.ListJobsResponse(jobs=[job_to_proto(r) for r in rows])

    async def GetArtifact(self, request: service_pb2.GetArtifactRequest,
                          context: grpc.aio.ServicerContext) -> service_pb2.GetArtifactResponse:
        try:
            check_key(request.key)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"key: {exc}")
        job = await self._own_job(request.job_id, context)
        with self.factory() as s:
            nodes = list(s.scalars(select(NodeRow).where(NodeRow.job_id == job.id)))
        if request.key not in artifact_keys(job, nodes):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"key {request.key!r} is not referenced by job {job.id}")
        try:
            data = await asyncio.to_thread(self.store.get, request.key)
        except ObjectNotFound:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"object {request.key!r} is missing from the store")
        return service_pb2.GetArtifactResponse(data=data)

    async def ApproveCandidate(self, request: service_pb2.ApproveCandidateRequest,
                               context: grpc.aio.ServicerContext) -> service_pb2.ApproveCandidateResponse:
        await self._own_job(request.job_id, context)
        try:
            node = await self.engine.approve(request.job_id, request.node_id)
        except KeyError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"node {request.node_id!r} not found in this job")
        except ValueError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        with self.factory() as s:
            row = s.get(NodeRow, node.id)
            assert row is not None
            return service_pb2.ApproveCandidateResponse(candidate=node_to_proto(row))

    async def _job_nodes(self, job_id: str, context: grpc.aio.ServicerContext) -> tuple[JobRow, list[NodeRow]]:
        job = await self._own_job(job_id, context)
        with self.factory() as s:
            nodes = list(s.scalars(select(NodeRow).where(NodeRow.job_id == job.id).order_by(NodeRow.seq)))
        return job, nodes

    async def _render(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: object) -> T:
        """An export or report on the tenant's share of the render threads.

        It waits for a thread at most half of what is left of the call, leaving the rest to the
        work itself."""
        remaining = context.time_remaining()
        limit = self.settings.max_deadline_s if remaining is None else min(remaining, self.settings.max_deadline_s)
        try:
            return await self.renders.run(self.auth.tenant(context), limit / 2, fn, *args)
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            raise  # abort raises; this keeps the type checker informed

    async def ExportJob(self, request: service_pb2.ExportJobRequest,
                        context: grpc.aio.ServicerContext) -> service_pb2.ExportJobResponse:
        job, nodes = await self._job_nodes(request.job_id, context)
        device = "cuda" if get_platform(self.kb_dir, job.platform).runner == "cuda" else "cpu"
        result = await self._render(context, export_job, job, nodes, self.store, device)
        return service_pb2.ExportJobResponse(module_source=result.source, kernels=result.kernels,
                                             fallbacks=result.fallbacks)

    async def GetReport(self, request: service_pb2.GetReportRequest,
                        context: grpc.aio.ServicerContext) -> service_pb2.GetReportResponse:
        job, nodes = await self._job_nodes(request.job_id, context)
        html = await self._render(context, report_job, job, nodes, self.store)
        return service_pb2.GetReportResponse(html=html)
