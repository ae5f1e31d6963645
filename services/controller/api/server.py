"""The gRPC server: JobService plus health checking and reflection, with limits and TLS.

Limits on concurrent calls are per tenant (``tenancy.LimitInterceptor``), not gRPC's
server-wide ``maximum_concurrent_rpcs``: that one counts health checks too, so a tenant
holding many streams would make the server look dead to its probes.
"""

from __future__ import annotations

import asyncio

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from sqlalchemy import Engine as DbEngine

from kevolve.bus import Bus
from kevolve.v1 import service_pb2, service_pb2_grpc
from services.controller.config import ControllerSettings
from services.controller.store import db

from .auth import AuthInterceptor
from .job_service import JobService
from .tenancy import CallGate, LimitInterceptor

log = structlog.get_logger("controller.server")

SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["JobService"].full_name


async def build_server(settings: ControllerSettings, service: JobService,
                       health_servicer: health.aio.HealthServicer) -> tuple[grpc.aio.Server, int]:
    options = [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]
    gate = CallGate(settings.calls_per_tenant, settings.watch_streams_per_tenant, settings.max_concurrent_rpcs)
    # Authentication first: only a call with a known tenant takes one of that tenant's slots.
    server = grpc.aio.server(
        interceptors=[AuthInterceptor(service.auth, settings.max_deadline_s), LimitInterceptor(service.auth, gate)],
        options=options,
    )
    service_pb2_grpc.add_JobServiceServicer_to_server(service, server)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    address = f"{settings.grpc_host}:{settings.grpc_port}"
    if settings.tls_cert and settings.tls_key:
        creds = grpc.ssl_server_credentials([(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())])
        port = server.add_secure_port(address, creds)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind gRPC address {address}")
    return server, port


async def watch_health(health_servicer: health.aio.HealthServicer, bus: Bus, engine: DbEngine,
                       interval_s: float, stop: asyncio.Event) -> None:
    """SERVING only while both NATS and the DB answer; re-checked every ``interval_s``."""
    last: int | None = None
    while not stop.is_set():
        db_ok = await asyncio.to_thread(db.ping, engine)
        ok = db_ok and bus.nc.is_connected
        status = health_pb2.HealthCheckResponse.SERVING if ok else health_pb2.HealthCheckResponse.NOT_SERVING
        if status != last:
            for name in ("", SERVICE_NAME):
                await health_servicer.set(name, status)
            log.info("health", serving=ok, nats=bus.nc.is_connected, db=db_ok)
            last = status
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        except TimeoutError:
            pass
