"""python -m services.controller: the controller service (gRPC API + search engine)."""

from __future__ import annotations

import asyncio
import sys

import structlog
from pydantic import ValidationError

from kevolve import runtime
from kevolve.config import CommonSettings

from .app import Controller
from .config import ControllerSettings

log = structlog.get_logger("controller")


async def main() -> None:
    try:
        common = CommonSettings()
        settings = ControllerSettings()
    except ValidationError as exc:
        # Name the bad variable and exit, rather than a traceback.
        print(f"controller: invalid settings:\n{exc}", file=sys.stderr)
        raise SystemExit(2) from None
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
