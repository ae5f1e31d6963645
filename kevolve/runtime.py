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

import structlog
from prometheus_client import Gauge, start_http_server

from kevolve.config import CommonSettings

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


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(main())
