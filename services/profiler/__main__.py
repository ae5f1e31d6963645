"""Entry point: `python -m services.profiler` consumes kv.work.profile.<platform> until SIGTERM."""
from __future__ import annotations

import asyncio

import structlog

from kevolve import runtime, subjects
from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.objstore import open_store
from kevolve.platforms import get_platform
from kevolve.v1 import profile_pb2
from services.profiler.config import ProfilerSettings
from services.profiler.handlers import ProfileHandler, Profiler

log = structlog.get_logger("profiler")


async def main() -> None:
    common = CommonSettings()
    settings = ProfilerSettings()
    runtime.configure_logging(common.log_json, common.log_level)
    # An unknown platform or a bad machine model fails here, before connecting.
    platform = get_platform(common.kb_dir, settings.platform)
    profiler = Profiler(settings, common, platform)
    store = open_store(common)
    runtime.serve_metrics(settings.metrics_port)
    stop = runtime.stop_event_on_signals()
    bus = await Bus.connect(common, f"profiler-{platform.name}")
    runtime.UP.labels("profiler").set(1)
    handler = ProfileHandler(bus, store, profiler)
    consumer = bus.consumer(subjects.profile_subject(platform.name), profile_pb2.ProfileRequest,
                            handler.handle, concurrency=settings.concurrency, on_give_up=handler.give_up)
    log.info("profiler ready", platform=platform.name, runner=platform.runner, nats=common.nats_url,
             concurrency=settings.concurrency)
    try:
        await consumer.run(stop)
    finally:
        runtime.UP.labels("profiler").set(0)
        await bus.close()


if __name__ == "__main__":
    asyncio.run(main())
