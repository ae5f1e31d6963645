"""Entry point: `python -m services.generator` consumes kv.work.generate until SIGTERM."""
from __future__ import annotations

import asyncio

import structlog

from kevolve import runtime, subjects
from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.objstore import open_store
from kevolve.v1 import work_pb2
from services.generator.backends import build_backend
from services.generator.config import GeneratorSettings
from services.generator.handlers import GenerateHandler

log = structlog.get_logger("generator")


async def main() -> None:
    common = CommonSettings()
    settings = GeneratorSettings()
    runtime.configure_logging(common.log_json, common.log_level)
    backend = build_backend(settings, common)  # fails before connecting on a bad config
    store = open_store(common)
    runtime.serve_metrics(settings.metrics_port)
    stop = runtime.stop_event_on_signals()
    bus = await Bus.connect(common, "generator")
    runtime.UP.labels("generator").set(1)
    handler = GenerateHandler(bus, store, backend)
    consumer = bus.consumer(subjects.GENERATE, work_pb2.GenerateRequest, handler.handle,
                            concurrency=settings.concurrency, on_give_up=handler.give_up)
    log.info("generator ready", backend=backend.name, nats=common.nats_url, concurrency=settings.concurrency)
    try:
        await consumer.run(stop)
    finally:
        runtime.UP.labels("generator").set(0)
        await backend.aclose()
        await bus.close()


if __name__ == "__main__":
    asyncio.run(main())
