"""Bus handler: EvaluationRequest -> harness -> reports/eval/<sha>.json -> EvaluationResult."""

from __future__ import annotations

import asyncio

import structlog
from prometheus_client import Counter, Gauge, Histogram

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.objstore import ObjectNotFound, ObjectStore
from kevolve.platforms import Platform
from kevolve.reports import Check, EvaluationReport
from kevolve.v1 import common_pb2, evaluation_pb2

from .config import EvaluatorSettings
from .harness import Harness
from .plan import EvalJob
from .verdict import Outcome, worker_name

log = structlog.get_logger("evaluator")

EVALUATIONS = Counter(
    "kevolve_evaluator_evaluations_total",
    "Evaluations finished, by verdict",
    ["platform", "stage", "verdict"],
)
SECONDS = Histogram(
    "kevolve_evaluator_seconds",
    "Wall time of one evaluation",
    ["platform", "stage"],
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
BUSY = Gauge("kevolve_evaluator_busy", "Evaluations in progress", ["platform"])
SANDBOX_KILLS = Counter(
    "kevolve_evaluator_sandbox_kills_total", "Candidate process groups killed", ["platform", "reason"]
)
WORKER_RESTARTS = Counter(
    "kevolve_evaluator_worker_restarts_total",
    "Candidate GPU processes replaced after they died or hit a device error",
    ["platform"],
)

MAX_SOURCE_BYTES = 1_000_000


class EvaluateHandler:
    def __init__(
        self, bus: Bus, store: ObjectStore, harness: Harness, platform: Platform, settings: EvaluatorSettings
    ) -> None:
        self.bus = bus
        self.store = store
        self.harness = harness
        self.platform = platform
        self.settings = settings

    async def _source(self, key: str, what: str) -> str:
        data = await asyncio.to_thread(self.store.get, key)
        if len(data) > MAX_SOURCE_BYTES:
            raise ValueError(f"{what} {key} is {len(data)} bytes (limit {MAX_SOURCE_BYTES})")
        return data.decode("utf-8", errors="replace")

    def _job(self, req: evaluation_pb2.EvaluationRequest, spec: str, candidate: str) -> EvalJob:
        return EvalJob(
            spec_source=spec,
            candidate_source=candidate,
            platform=self.platform,
            stage=req.stage or "full",
            test_cases=[(c.name or f"case{i}", dict(c.sizes)) for i, c in enumerate(req.test_cases)],
            cpu_sizes=dict(req.cpu_sizes),
            atol=max(0.0, req.atol),
            rtol=max(0.0, req.rtol),
            trials=max(self.settings.trials, req.trials),
            seed=req.seed,
            timeout_s=min(req.timeout_s, 3600.0) if req.timeout_s > 0 else 0.0,
            tenant=req.tenant or "default",
            cuda_graphs=req.cuda_graphs,
            allow_tf32=req.allow_tf32,
        )

    async def handle(self, req: evaluation_pb2.EvaluationRequest, delivery: Delivery) -> None:
        problem = self._request_problem(req)
        if problem:  # a request that can never be evaluated: answer at once, do not retry
            await self._publish(req, self._failure(req, "INFRA_ERROR", "request:invalid", problem))
            return
        try:
            spec = await self._source(req.spec_key, "spec")
            candidate = await self._source(req.candidate_key, "candidate")
        except (ObjectNotFound, ValueError) as exc:
            # A missing or oversized object will not appear by retrying.
            await self._publish(
                req,
                self._failure(
                    req, "INFRA_ERROR", "request:object", f"cannot read {exc} from the object store"
                ),
            )
            return
        BUSY.labels(self.platform.name).inc()
        try:
            with SECONDS.labels(self.platform.name, req.stage or "full").time():
                outcome = await asyncio.to_thread(self.harness.evaluate, self._job(req, spec, candidate))
        finally:
            BUSY.labels(self.platform.name).dec()
        if outcome.result.sandbox.startswith("degraded"):
            log.warning("sandbox degraded", why=outcome.result.sandbox)
        if outcome.result.decided_by.startswith("sandbox:"):
            SANDBOX_KILLS.labels(self.platform.name, outcome.result.decided_by.split(":", 1)[1]).inc()
        if self.platform.runner == "cuda" and outcome.result.verdict in (
            common_pb2.CRASHED,
            common_pb2.TIMEOUT,
        ):
            WORKER_RESTARTS.labels(self.platform.name).inc()  # the next candidate gets a fresh GPU process
        await self._publish(req, outcome)

    def _request_problem(self, req: evaluation_pb2.EvaluationRequest) -> str:
        if not req.spec_key or not req.candidate_key:
            return "EvaluationRequest needs spec_key and candidate_key"
        if req.platform and req.platform != self.platform.name:
            return f"request for platform {req.platform!r} reached the {self.platform.name!r} pool"
        if req.trials < 0 or req.trials > 100:
            return f"trials={req.trials} is out of range (0..100)"
        return ""

    def _failure(
        self, req: evaluation_pb2.EvaluationRequest, verdict: str, decided_by: str, reason: str
    ) -> Outcome:
        result = evaluation_pb2.EvaluationResult(
            platform=self.platform.name,
            stage=req.stage,
            verdict=common_pb2.Verdict.Value(verdict),
            decided_by=decided_by,
            reason=reason[:4000],
            worker=self.settings.worker_name or worker_name(),
        )
        return Outcome(EvaluationReport(result=result, checks=[Check(name="request", passed=False, detail=reason)]))

    async def give_up(
        self, req: evaluation_pb2.EvaluationRequest, delivery: Delivery, exc: BaseException
    ) -> None:
        reason = f"evaluator failed {delivery.num_delivered} times: {type(exc).__name__}: {exc}"
        await self._publish(req, self._failure(req, "INFRA_ERROR", "infra:gave_up", reason))

    async def _publish(self, req: evaluation_pb2.EvaluationRequest, outcome: Outcome) -> None:
        result = outcome.result
        result.job_id, result.node_id, result.attempt = req.job_id, req.node_id, req.attempt
        result.stage = req.stage or result.stage
        if self.settings.worker_name:
            result.worker = self.settings.worker_name
        # Stored before report_key is known: the report's own key is not part of it.
        data = outcome.evaluation.to_json()
        result.report_key = await asyncio.to_thread(self.store.put, data, "reports/eval", ".json")
        msg_id = f"eval:{req.job_id}:{req.node_id}:{req.attempt}:{req.stage}"
        await self.bus.publish(subjects.EVALUATED, result, msg_id=msg_id)
        EVALUATIONS.labels(
            self.platform.name, req.stage or "full", common_pb2.Verdict.Name(result.verdict)
        ).inc()
        log.info(
            "evaluated",
            job=req.job_id,
            node=req.node_id,
            verdict=common_pb2.Verdict.Name(result.verdict),
            decided_by=result.decided_by,
            fitness=round(result.fitness, 4),
            seconds=round(result.duration_s, 2),
        )
