"""Bearer-token authentication and server-side deadline caps, as a gRPC server interceptor.

Tokens map to tenants (``KEVOLVE_CONTROLLER_TOKENS``). With no tokens configured the API
is open and every caller is tenant "default" (the single-machine setup). Health checks and
reflection stay open so probes and tooling work without a token.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")
DEFAULT_TENANT = "default"


class Auth:
    def __init__(self, tokens: dict[str, str]) -> None:
        self.tokens = tokens

    @property
    def open(self) -> bool:
        return not self.tokens

    def tenant_for(self, metadata: Any) -> str | None:
        if self.open:
            return DEFAULT_TENANT
        for key, value in metadata or ():
            if key.lower() == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                offered = value.removeprefix("Bearer ").strip()
                # Constant-time compare, so response timing reveals nothing about tokens.
                for token, tenant in self.tokens.items():
                    if hmac.compare_digest(token.encode(), offered.encode()):
                        return tenant
        return None

    def tenant(self, context: grpc.aio.ServicerContext) -> str:
        tenant = self.tenant_for(context.invocation_metadata())
        if tenant is None:  # the interceptor already rejected these; defence in depth
            raise PermissionError("unauthenticated")
        return tenant


class AuthInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, auth: Auth, max_deadline_s: float) -> None:
        self.auth = auth
        self.max_deadline_s = max_deadline_s

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_PREFIXES):
            return handler
        if self.auth.tenant_for(details.invocation_metadata) is None:
            return _rejecting(handler)
        if handler.unary_unary is not None:
            return _capped(handler, self.max_deadline_s)
        return handler


def _rejecting(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    message = "missing or invalid bearer token (send metadata 'authorization: Bearer <token>')"

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - makes this an async generator

    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(stream, handler.request_deserializer,
                                                    handler.response_serializer)
    return grpc.unary_unary_rpc_method_handler(unary, handler.request_deserializer, handler.response_serializer)


def _capped(handler: grpc.RpcMethodHandler, cap_s: float) -> grpc.RpcMethodHandler:
    inner = handler.unary_unary

    async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
        remaining = context.time_remaining()
        limit = cap_s if remaining is None else min(cap_s, max(0.0, remaining))
        try:
            return await asyncio.wait_for(inner(request, context), timeout=limit)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"call exceeded {limit:.1f}s")

    return grpc.unary_unary_rpc_method_handler(behavior, handler.request_deserializer, handler.response_serializer)
