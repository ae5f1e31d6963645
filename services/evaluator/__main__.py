"""Entry point.

``python -m services.evaluator`` consumes kv.work.eval.<platform> until SIGTERM.
``python -m services.evaluator eval SPEC.py CANDIDATE.py --platform cpu [--json]`` runs the
same checks once and prints the verdict (exit status 0 only for a pass).
"""

from __future__ import annotations

import asyncio
import sys

import structlog

from kevolve import runtime, subjects
from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.objstore import open_store
from kevolve.platforms import get_platform
from kevolve.v1 import evaluation_pb2

from .config import EvaluatorSettings
from .handlers import EvaluateHandler
from .harness import Harness

log = structlog.get_logger("evaluator")


async def serve() -> None:
    common = CommonSettings()
    settings = EvaluatorSettings()
    runtime.configure_logging(common.log_json, common.log_level)
    platform = get_platform(common.kb_dir, settings.platform)  # unknown platform: fail before connecting
    harness = Harness(settings, common.kb_dir)
    store = open_store(common)
    runtime.serve_metrics(settings.metrics_port)
    stop = runtime.stop_event_on_signals()
    bus = await Bus.connect(common, f"evaluator-{platform.name}")
    runtime.UP.labels("evaluator").set(1)
    handler = EvaluateHandler(bus, store, harness, platform, settings)
    subject = subjects.eval_subject(platform.name)
    consumer = bus.consumer(
        subject,
        evaluation_pb2.EvaluationRequest,
        handler.handle,
        concurrency=settings.concurrency,
        on_give_up=handler.give_up,
    )
    log.info("evaluator ready", platform=platform.name, subject=subject, nats=common.nats_url)
    try:
        await consumer.run(stop)
    finally:
        runtime.UP.labels("evaluator").set(0)
        harness.close()
        await bus.close()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "eval":
        from .cli import eval_main

        sys.exit(eval_main(sys.argv[2:]))
    asyncio.run(serve())


if __name__ == "__main__":
    main()
