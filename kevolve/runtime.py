"""What every service process does the same way: logging, metrics endpoint, graceful stop.

Kubernetes stops a pod with SIGTERM: the stop event is set, consumers stop fetching,
in-flight work finishes (or is NAKed back to JetStream), then the process exits.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import structlog
from google.protobuf.message import Message
from prometheus_client import Gauge, start_http_server

from kevolve.bus import Bus, Delivery
from kevolve.config import CommonSettings

M = TypeVar("M", bound=Message)

UP = Gauge("kevolve_service_up", "1 while the service process is running and connected", ["service"])


def configure_logging(json_logs: bool, level: str = "info") -> None:
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*processors, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def serve_metrics(port: int, addr: str | None = None) -> None:
    """Expose /metrics on ``port`` (0 disables it, as the single-machine tests do).

    ``addr`` defaults to KEVOLVE_METRICS_HOST (all interfaces unless set).
    """
    if port:
        start_http_server(port, addr=addr if addr is not None else CommonSettings().metrics_host)


def stop_event_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


class WorkHandler(Protocol[M]):
    """What a worker service hands the bus: a handler and what to publish on the last failure."""

    async def handle(self, message: M, delivery: Delivery) -> None: ...

    async def give_up(self, message: M, delivery: Delivery, exc: BaseException) -> None: ...


async def serve_work(common: CommonSettings, *, service: str, instance: str, subject: str,
                     message_type: type[M], make_handler: Callable[[Bus], WorkHandler[M]],
                     concurrency: int, metrics_port: int, **log_fields: Any) -> None:
    """The life of every worker service: metrics up, connect, consume until SIGTERM, close.

    Settings and heavy state (KB, harness, backend) are built by the caller *before* this, so
    a bad configuration fails the process at start instead of after it took work.
    """
    serve_metrics(metrics_port)
    stop = stop_event_on_signals()
    bus = await Bus.connect(common, instance)
    UP.labels(service).set(1)
    handler = make_handler(bus)
    consumer = bus.consumer(subject, message_type, handler.handle, concurrency=concurrency,
                            on_give_up=handler.give_up)
    structlog.get_logger(service).info(f"{service} ready", subject=subject, nats=common.nats_url, **log_fields)
    try:
        await consumer.run(stop)
    finally:
        UP.labels(service).set(0)
        await bus.close()


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(main())
