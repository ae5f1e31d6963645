"""Entry point: `python -m services.retriever` consumes kv.work.expand until SIGTERM."""

from __future__ import annotations

import asyncio

import structlog

from kevolve import runtime, subjects
from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.objstore import open_store
from kevolve.v1 import work_pb2
from services.retriever.config import RetrieverSettings
from services.retriever.expand import Expander
from services.retriever.handlers import ExpandHandler

log = structlog.get_logger("retriever")


async def main() -> None:
    common = CommonSettings()
    settings = RetrieverSettings()
    runtime.configure_logging(common.log_json, common.log_level)
    reranker = None
    if settings.rerank_embeddings:
        from services.retriever.rerank import load_reranker  # optional extra, imported only when asked for

        reranker = load_reranker(settings.embedding_package)
    # The KB and templates load before connecting, so a broken KB fails the process at start.
    expander = Expander(open_store(common), common.kb_dir, settings, reranker)
    runtime.serve_metrics(settings.metrics_port)
    stop = runtime.stop_event_on_signals()
    bus = await Bus.connect(common, "retriever")
    runtime.UP.labels("retriever").set(1)
    handler = ExpandHandler(bus, expander)
    consumer = bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, handler.handle,
                            concurrency=settings.concurrency, on_give_up=handler.give_up)
    log.info("retriever ready", nats=common.nats_url, kb=str(common.kb_dir), sections=len(expander.kb.sections),
             rerank=settings.rerank_embeddings)
    try:
        await consumer.run(stop)
    finally:
        runtime.UP.labels("retriever").set(0)
        await bus.close()


if __name__ == "__main__":
    asyncio.run(main())
