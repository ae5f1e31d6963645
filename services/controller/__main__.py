"""python -m services.controller: the controller service (gRPC API + search engine)."""

from __future__ import annotations

import asyncio

import structlog

from kevolve import runtime
from kevolve.config import CommonSettings, load_settings

from .app import Controller
from .config import ControllerSettings

log = structlog.get_logger("controller")


async def main() -> None:
    common = load_settings("controller", CommonSettings)
    settings = load_settings("controller", ControllerSettings)
    runtime.configure_logging(common.log_json, common.log_level)
    runtime.serve_metrics(settings.metrics_port)
    controller = Controller(common, settings)
    stop = runtime.stop_event_on_signals()
    # Start-up waits for NATS to come up (the bus reconnects), but SIGTERM must still stop it.
    starting = asyncio.create_task(controller.start())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        log.info("stopped before start-up finished", nats=common.nats_url)
        return
    stopping.cancel()
    if starting.exception() is not None:
        log.error("controller could not start", error=repr(starting.exception()), nats=common.nats_url,
                  database=settings.database_url.split("@")[-1], grpc_port=settings.grpc_port)
        raise SystemExit(1)
    runtime.UP.labels("controller").set(1)
    try:
        await stop.wait()
    finally:
        runtime.UP.labels("controller").set(0)
        await controller.close()


if __name__ == "__main__":
    runtime.run(main)
