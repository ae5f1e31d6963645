"""Bus handler: GenerateRequest -> backend -> kernels/<sha>.py -> CandidateGenerated."""
from __future__ import annotations

import asyncio
import time

import structlog
from prometheus_client import Counter, Histogram

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.objstore import ObjectStore
from kevolve.v1 import work_pb2
from services.generator.backends.base import Backend, Generation
from services.generator.backends.distinct import KERNEL_PREFIX, KERNEL_SUFFIX

log = structlog.get_logger("generator")

CANDIDATES = Counter(
    "kevolve_generator_candidates_total", "Candidates produced, by backend and outcome", ["backend", "outcome"]
)
SECONDS = Histogram(
    "kevolve_generator_seconds",
    "Time one backend call took",
    ["backend"],
    buckets=(0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)


class GenerateHandler:
    """Holds the backend, the store and the bus; one instance per service process."""

    def __init__(self, bus: Bus, store: ObjectStore, backend: Backend) -> None:
        self.bus = bus
        self.store = store
        self.backend = backend

    async def _text(self, key: str) -> str:
        data = await asyncio.to_thread(self.store.get, key)
        return data.decode("utf-8", errors="replace")

    async def handle(self, request: work_pb2.GenerateRequest, delivery: Delivery) -> None:
        expand = request.expand
        if not expand.spec_key:
            # Nothing to generate from; retrying cannot help, so answer at once.
            await self._publish(request, Generation(code=None, error="GenerateRequest has no expand.spec_key"), 0.0)
            return
        # ObjectNotFound / store outages raise: the bus retries, and on_give_up answers.
        spec_source = await self._text(expand.spec_key)
        prompt = await self._text(request.prompt_key) if request.prompt_key else ""
        parent_code = await self._text(expand.parent.code_key) if expand.parent.code_key else None
        started = time.perf_counter()
        generation = await self.backend.generate(request, prompt, spec_source, parent_code)
        elapsed = time.perf_counter() - started
        SECONDS.labels(self.backend.name).observe(elapsed)
        await self._publish(request, generation, elapsed)

    async def give_up(self, request: work_pb2.GenerateRequest, delivery: Delivery, exc: BaseException) -> None:
        """Last delivery failed: tell the controller (NO_CODE) rather than drop the expansion."""
        error = f"generator failed after {delivery.num_delivered} attempts: {type(exc).__name__}: {exc}"
        await self._publish(request, Generation(code=None, error=error[:2000]), 0.0, outcome="gave_up")

    async def _publish(self, request: work_pb2.GenerateRequest, generation: Generation, elapsed: float,
                       outcome: str | None = None) -> None:
        expand = request.expand
        code_key = ""
        if generation.code:
            code_key = await asyncio.to_thread(self.store.put, generation.code.encode(), KERNEL_PREFIX,
                                             KERNEL_SUFFIX)
        error = "" if code_key else (generation.error or "backend returned no code")
        reply_key = ""
        if generation.reply:
            reply_key = await asyncio.to_thread(self.store.put, generation.reply.encode(), "replies", ".md")
        message = work_pb2.CandidateGenerated(
            job_id=expand.job_id,
            expansion_id=expand.expansion_id,
            parent_id=expand.parent.node_id,
            code_key=code_key,
            backend=self.backend.name,
            usage=generation.usage(),
            prompt_key=request.prompt_key,
            retrieved_docs=list(request.retrieved_docs),
            tunables=generation.tunables,
            context_mode=expand.context_mode,
            error=error,
            generation=expand.generation,
            diagnosis=request.diagnosis,
            generation_s=elapsed,
            reply_key=reply_key,
            job_cannot_continue=generation.job_cannot_continue,
        )
        # The expansion id de-duplicates a redelivered request's second publish.
        await self.bus.publish(subjects.CANDIDATE, message, msg_id=expand.expansion_id or None)
        outcome = outcome or ("code" if code_key else "no_code")
        CANDIDATES.labels(self.backend.name, outcome).inc()
        log.info("candidate", job_id=expand.job_id, expansion_id=expand.expansion_id, outcome=outcome,
                 code_key=code_key, error=error[:200], seconds=round(elapsed, 3), tunables=generation.tunables)
