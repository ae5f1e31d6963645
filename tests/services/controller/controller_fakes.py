"""Scripted stand-ins for the retriever+generator, evaluator pools and profilers (test fixtures).

They talk to the controller only through the real bus, exactly as the real services do:
consume kv.work.expand / kv.work.eval.<p> / kv.work.profile.<p>, publish results.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.config import CommonSettings
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, profile_pb2, service_pb2, service_pb2_grpc, work_pb2
from services.controller.app import Controller
from services.controller.config import ControllerSettings

SPEC = (Path(__file__).resolve().parents[3] / "examples" / "softmax.py").read_text()

# What the fake generator does for an expansion: None = a normal candidate, a string = NO_CODE error.
GenScript = Callable[[work_pb2.ExpandRequest], Awaitable[str | None]]
# What the fake evaluator answers: (verdict, fitness) for a request.
EvalScript = Callable[[evaluation_pb2.EvaluationRequest], Awaitable[tuple[int, float]]]


async def _ok_gen(req: work_pb2.ExpandRequest) -> str | None:
    return None


async def _pass_eval(req: evaluation_pb2.EvaluationRequest) -> tuple[int, float]:
    return common_pb2.PASSED, 1.5


@dataclass
class Fakes:
    settings: CommonSettings
    gen: GenScript = _ok_gen
    evaluate: EvalScript = _pass_eval
    pools: tuple[str, ...] = ("cpu",)
    # Source the fake generator writes for an expansion (default: unique per expansion).
    code: Callable[[work_pb2.ExpandRequest], str] | None = None
    expands: list[work_pb2.ExpandRequest] = field(default_factory=list)
    evals: list[evaluation_pb2.EvaluationRequest] = field(default_factory=list)
    profiles: list[profile_pb2.ProfileRequest] = field(default_factory=list)
    outstanding: int = 0
    max_outstanding: int = 0

    async def _on_expand(self, req: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        self.expands.append(req)
        self.outstanding += 1
        self.max_outstanding = max(self.max_outstanding, self.outstanding)
        try:
            error = await self.gen(req)
        finally:
            self.outstanding -= 1
        msg = work_pb2.CandidateGenerated(job_id=req.job_id, expansion_id=req.expansion_id,
                                          parent_id=req.parent.node_id, backend="fake",
                                          context_mode=req.context_mode, generation=req.generation,
                                          usage=common_pb2.Usage(prompt_tokens=100, completion_tokens=50))
        if error:
            msg.error = error
            # A generator that can serve none of the job's models says so ("fatal: ..." here).
            msg.job_cannot_continue = error.startswith("fatal:")
            msg.reply_key = self.store.put(f"raw reply to {req.expansion_id}".encode(), "replies", ".md")
        else:
            source = self.code(req) if self.code else f"# kernel for {req.expansion_id}\nclass ModelNew: pass\n"
            msg.code_key = self.store.put(source.encode(), "kernels", ".py")
            msg.tunables["BLOCK_SIZE"] = str(64 * (1 + req.generation))
        await self.bus.publish(subjects.CANDIDATE, msg, msg_id=f"cand-{req.expansion_id}")

    async def _on_eval(self, req: evaluation_pb2.EvaluationRequest, delivery: Delivery) -> None:
        self.evals.append(req)
        verdict, fitness = await self.evaluate(req)
        await self.bus.publish(subjects.EVALUATED, self.result(req, verdict, fitness))

    def result(self, req: evaluation_pb2.EvaluationRequest, verdict: int, fitness: float) -> evaluation_pb2.EvaluationResult:
        report = self.store.put(f'{{"node": "{req.node_id}", "stage": "{req.stage}"}}'.encode(), "reports/eval",
                                ".json")
        return evaluation_pb2.EvaluationResult(
            job_id=req.job_id, node_id=req.node_id, platform=req.platform, stage=req.stage, verdict=verdict,
            decided_by="trial:allclose" if verdict != common_pb2.PASSED else "", reason="scripted",
            fitness=fitness if verdict in (common_pb2.PASSED, common_pb2.SUSPICIOUS) else 0.0,
            report_key=report, attempt=req.attempt, duration_s=0.01,
            cases=[evaluation_pb2.CaseResult(name="default", passed=verdict == common_pb2.PASSED,
                                             candidate_ms=1.0, compile_ms=1.5, fitness=fitness)])

    async def _on_profile(self, req: profile_pb2.ProfileRequest, delivery: Delivery) -> None:
        self.profiles.append(req)
        key = self.store.put(f'{{"node": "{req.node_id}"}}'.encode(), "reports/profile", ".json")
        await self.bus.publish(subjects.PROFILED, profile_pb2.ProfileResult(
            job_id=req.job_id, node_id=req.node_id, platform=req.platform, report_key=key,
            summary="memory_bound at 41% of DRAM bandwidth", bottleneck="memory_bound"))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Fakes]:
        self.store = LocalStore(Path(self.settings.objects_url))
        self.bus = await Bus.connect(self.settings, "fakes")
        stop = asyncio.Event()
        consumers = [self.bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, self._on_expand, concurrency=8)]
        for pool in self.pools:
            consumers.append(self.bus.consumer(subjects.eval_subject(pool), evaluation_pb2.EvaluationRequest,
                                               self._on_eval, concurrency=4))
            consumers.append(self.bus.consumer(subjects.profile_subject(pool), profile_pb2.ProfileRequest,
                                               self._on_profile, concurrency=2))
        tasks = [asyncio.create_task(c.run(stop)) for c in consumers]
        try:
            yield self
        finally:
            stop.set()
            await asyncio.wait(tasks, timeout=10)
            await self.bus.close()


def controller_settings(tmp_path: Path, **overrides: object) -> ControllerSettings:
    values: dict[str, object] = dict(database_url=f"sqlite:///{tmp_path / 'meta.db'}", grpc_host="127.0.0.1",
                                     grpc_port=0, health_interval_s=0.2, spec_probe_timeout_s=60)
    values.update(overrides)
    return ControllerSettings(**values)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def controller(common: CommonSettings, settings: ControllerSettings) -> AsyncIterator[Controller]:
    ctl = Controller(common, settings)
    await ctl.start()
    try:
        yield ctl
    finally:
        await ctl.close()


@contextlib.asynccontextmanager
async def client(port: int) -> AsyncIterator[service_pb2_grpc.JobServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield service_pb2_grpc.JobServiceStub(channel)


def submit_request(platform: str = "cpu", source: str = SPEC, **config: object) -> service_pb2.SubmitJobRequest:
    return service_pb2.SubmitJobRequest(spec=job_pb2.KernelSpec(name="softmax", source=source), platform=platform,
                                        config=job_pb2.JobConfig(**config))  # type: ignore[arg-type]


async def wait_ended(stub: service_pb2_grpc.JobServiceStub, job_id: str, timeout: float = 60) -> job_pb2.Job:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        job = (await stub.GetJob(service_pb2.GetJobRequest(job_id=job_id), timeout=10)).job
        if job.state in (job_pb2.SUCCEEDED, job_pb2.FAILED, job_pb2.CANCELLED):
            return job
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"job {job_id} still {job_pb2.JobState.Name(job.state)} after {timeout}s: {job}")
        await asyncio.sleep(0.1)
