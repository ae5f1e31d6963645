"""The controller's bus consumers: decode a result, hand it to the engine, ack after commit.

Each handler is idempotent (dedupe by expansion id, fencing by attempt token), which is
what makes JetStream's at-least-once delivery safe here.
"""

from __future__ import annotations

import asyncio

import structlog

from kevolve import subjects
from kevolve.bus import Bus, Delivery, WorkConsumer
from kevolve.v1 import evaluation_pb2, profile_pb2, work_pb2
from services.controller.engine.engine import Engine

log = structlog.get_logger("controller.handlers")


def consumers(bus: Bus, engine: Engine) -> list[WorkConsumer]:  # type: ignore[type-arg]
    async def on_candidate(msg: work_pb2.CandidateGenerated, delivery: Delivery) -> None:
        if delivery.num_delivered > 1:
            log.info("candidate redelivered", expansion=msg.expansion_id, attempt=delivery.num_delivered)
        await engine.on_candidate(msg, delivery)

    async def on_evaluated(msg: evaluation_pb2.EvaluationResult, delivery: Delivery) -> None:
        await engine.on_evaluated(msg, delivery)

    async def on_profiled(msg: profile_pb2.ProfileResult, delivery: Delivery) -> None:
        await engine.on_profiled(msg, delivery)

    # No give-up handler: only the controller can record these results, so a handler that
    # keeps failing (the DB is down) leaves the message in the stream for the operator.
    return [
        bus.consumer(subjects.CANDIDATE, work_pb2.CandidateGenerated, on_candidate),
        bus.consumer(subjects.EVALUATED, evaluation_pb2.EvaluationResult, on_evaluated),
        bus.consumer(subjects.PROFILED, profile_pb2.ProfileResult, on_profiled),
    ]


async def run_consumers(bus: Bus, engine: Engine, stop: asyncio.Event) -> None:
    await asyncio.gather(*(c.run(stop) for c in consumers(bus, engine)))
