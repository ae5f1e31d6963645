"""Bus handler: ExpandRequest -> Expander -> GenerateRequest (kv.work.generate).

A request that can never be served (unknown platform, spec missing from the store) is
answered at once with a CandidateGenerated carrying the error, so the controller records
NO_CODE for the expansion instead of waiting for it forever; the same happens when the
bus gives up after repeated failures. Transient faults (store outage) raise and are retried.
"""

from __future__ import annotations

import time

import structlog
from prometheus_client import Counter, Histogram

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.v1 import work_pb2
from services.retriever.expand import Expander, ExpansionRejected

log = structlog.get_logger("retriever")

PROMPTS = Counter("kevolve_retriever_prompts_total", "Prompts synthesized, by platform and diagnosis category",
                  ["platform", "category"])
SECONDS = Histogram("kevolve_retriever_seconds", "Time to turn one ExpandRequest into a GenerateRequest",
                    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30))


class ExpandHandler:
    def __init__(self, bus: Bus, expander: Expander) -> None:
        self.bus = bus
        self.expander = expander

    async def handle(self, request: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        started = time.perf_counter()
        try:
            expansion = await self.expander.expand(request)
        except ExpansionRejected as exc:
            await self._fail(request, f"retriever: {exc}")
            return
        generate = expansion.generate
        # The expansion id de-duplicates the publish of a redelivered request.
        await self.bus.publish(subjects.GENERATE, generate, msg_id=request.expansion_id or None)
        elapsed = time.perf_counter() - started
        SECONDS.observe(elapsed)
        PROMPTS.labels(request.platform, generate.diagnosis.category).inc()
        log.info("prompt", job_id=request.job_id, expansion_id=request.expansion_id,
                 category=generate.diagnosis.category, prompt_key=generate.prompt_key,
                 docs=len(generate.retrieved_docs), seconds=round(elapsed, 3))

    async def give_up(self, request: work_pb2.ExpandRequest, delivery: Delivery, exc: BaseException) -> None:
        await self._fail(request, f"retriever failed after {delivery.num_delivered} attempts: "
                                  f"{type(exc).__name__}: {exc}"[:2000])

    async def _fail(self, request: work_pb2.ExpandRequest, error: str) -> None:
        message = work_pb2.CandidateGenerated(
            job_id=request.job_id, expansion_id=request.expansion_id, parent_id=request.parent.node_id,
            backend="retriever", context_mode=request.context_mode, error=error, generation=request.generation,
        )
        await self.bus.publish(subjects.CANDIDATE, message, msg_id=request.expansion_id or None)
        PROMPTS.labels(request.platform or "unknown", "error").inc()
        log.warning("expansion answered with an error", job_id=request.job_id,
                    expansion_id=request.expansion_id, error=error)
