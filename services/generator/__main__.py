"""Entry point: `python -m services.generator` consumes kv.work.generate until SIGTERM."""
from __future__ import annotations

import asyncio


from kevolve import runtime, subjects
from kevolve.config import CommonSettings, load_settings
from kevolve.objstore import open_store
from kevolve.v1 import work_pb2
from services.generator.backends import build_backend
from services.generator.config import GeneratorSettings
from services.generator.handlers import GenerateHandler


async def main() -> None:
    common = load_settings("generator", CommonSettings)
    settings = load_settings("generator", GeneratorSettings)
    runtime.configure_logging(common.log_json, common.log_level)
    backend = build_backend(settings, common)  # fails before connecting on a bad config
    store = open_store(common)
    try:
        await runtime.serve_work(
            common, service="generator", instance="generator", subject=subjects.GENERATE,
            message_type=work_pb2.GenerateRequest, make_handler=lambda bus: GenerateHandler(bus, store, backend),
            concurrency=settings.concurrency, metrics_port=settings.metrics_port, backend=backend.name)
    finally:
        await backend.aclose()


if __name__ == "__main__":
    asyncio.run(main())
