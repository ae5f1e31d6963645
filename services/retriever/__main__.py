"""Entry point: `python -m services.retriever` consumes kv.work.expand until SIGTERM."""

from __future__ import annotations

import asyncio


from kevolve import runtime, subjects
from kevolve.config import CommonSettings, load_settings
from kevolve.objstore import open_store
from kevolve.v1 import work_pb2
from services.retriever.config import RetrieverSettings
from services.retriever.expand import Expander
from services.retriever.handlers import ExpandHandler


async def main() -> None:
    common = load_settings("retriever", CommonSettings)
    settings = load_settings("retriever", RetrieverSettings)
    runtime.configure_logging(common.log_json, common.log_level)
    reranker = None
    if settings.rerank_embeddings:
        from services.retriever.rerank import load_reranker  # optional extra, imported only when asked for

        reranker = load_reranker(settings.embedding_package)
    # The KB and templates load before connecting, so a broken KB fails the process at start.
    expander = Expander(open_store(common), common.kb_dir, settings, reranker)
    await runtime.serve_work(
        common, service="retriever", instance="retriever", subject=subjects.EXPAND,
        message_type=work_pb2.ExpandRequest, make_handler=lambda bus: ExpandHandler(bus, expander),
        concurrency=settings.concurrency, metrics_port=settings.metrics_port, kb=str(common.kb_dir),
        sections=len(expander.kb.sections), rerank=settings.rerank_embeddings)


if __name__ == "__main__":
    asyncio.run(main())
