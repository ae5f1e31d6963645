"""Wiring the controller together: DB, bus, engine, consumers, gRPC server, health.

``__main__`` runs this until SIGTERM; tests run the same ``Controller`` in-process.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import structlog
from grpc_health.v1 import health, health_pb2

from kevolve.bus import Bus
from kevolve.config import CommonSettings
from kevolve.objstore import open_store
from services.controller.api.auth import Auth
from services.controller.api.job_service import JobService
from services.controller.api.server import SERVICE_NAME, build_server, watch_health
from services.controller.bus import dead_letters
from services.controller.bus.consumers import run_consumers
from services.controller.engine.engine import Engine
from services.controller.engine.events import EventHub
from services.controller.store import db

from .config import ControllerSettings, is_loopback

log = structlog.get_logger("controller")


def write_port_file(path: Path, port: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)   # the launcher never reads a half-written file


class Controller:
    def __init__(self, common: CommonSettings, settings: ControllerSettings) -> None:
        self.common = common
        self.settings = settings
        self.port = 0
        self.stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self.db_engine = db.make_engine(self.settings.database_url)
        await asyncio.to_thread(db.upgrade, self.db_engine)
        self.factory = db.session_factory(self.db_engine)
        self.store = open_store(self.common)
        self.bus = await Bus.connect(self.common, "controller")
        self.hub = EventHub(self.bus)
        self.engine = Engine(self.settings, self.factory, self.bus, self.store, self.hub, self.common.kb_dir)
        await self.engine.resume()
        await dead_letters.subscribe(self.bus, self.engine)
        self.health = health.aio.HealthServicer()
        for name in ("", SERVICE_NAME):
            # Known from the first request on: NOT_SERVING until watch_health's first check,
            # never NOT_FOUND (which probes and clients read as a misconfigured name).
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        auth = Auth(self.settings.token_map())
        self.service = JobService(self.settings, self.factory, self.store, self.engine, auth, self.common.kb_dir)
        self.server, self.port = await build_server(self.settings, self.service, self.health)
        await self.server.start()
        self._tasks = [
            asyncio.create_task(self.engine.run(self.stop)),
            asyncio.create_task(run_consumers(self.bus, self.engine, self.stop)),
            asyncio.create_task(watch_health(self.health, self.bus, self.db_engine,
                                             self.settings.health_interval_s, self.stop)),
        ]
        log.info("controller ready", grpc_port=self.port, database=self.db_engine.url.render_as_string(),
                 auth="tokens" if not auth.open else "open (tenant 'default')",
                 tls=bool(self.settings.tls_cert))
        if auth.open and not is_loopback(self.settings.grpc_host):
            log.warning("the API is open (no KEVOLVE_CONTROLLER_TOKENS) on a non-loopback address: anyone "
                        "who reaches it acts as tenant 'default'", grpc_host=self.settings.grpc_host)
        if self.settings.port_file:
            write_port_file(self.settings.port_file, self.port)

    async def close(self) -> None:
        self.stop.set()
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=2)
        # Consumers finish their in-flight message first; one stuck on a dead connection is
        # cancelled (its message is unacked, so JetStream redelivers it to the next process).
        _, pending = await asyncio.wait(self._tasks, timeout=5)
        for task in pending:
            task.cancel()
        for task in self._tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                log.warning("task ended with an error", error=repr(task.exception()))
        self.service.close()
        await self.bus.close()
        self.db_engine.dispose()
