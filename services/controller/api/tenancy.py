"""Per-tenant limits of the public API: spec probes, concurrent calls, watch streams, submit rate.

One tenant's load must never reach another tenant's calls, so every shared resource a call
can hold is capped per tenant, and the caps are enforced here rather than by gRPC's
server-wide ``maximum_concurrent_rpcs`` (which counts health checks too, so a tenant that
filled it took the probes of Kubernetes down with everyone's calls). Health checking and
reflection never pass through these limits.

A limit that is hit answers RESOURCE_EXHAUSTED with a message naming the setting that
set it, so the caller knows what to wait for and the operator what to raise.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import grpc

from .auth import OPEN_PREFIXES, Auth

T = TypeVar("T")

ENV = "KEVOLVE_CONTROLLER_"


class LimitExceeded(Exception):
    """A per-tenant or server-wide limit refused a call; the message names the setting."""


class FairPool:
    """Blocking work (spec probes, exports and reports) on its own threads, shared fairly between tenants.

    At most ``per_tenant`` pieces of work of one tenant run at once, and ``per_tenant`` is below
    ``workers``, so one tenant never holds every thread: a tenant whose specs hang waits for
    its own probes, never for another tenant's. When every thread is busy, callers queue and
    freed threads go to the waiting tenants in turn (round robin), not first come first served.
    A slot is held until the thread finishes, not until the caller gives up: a probe outlives
    a cancelled call, and counting it freed early would let a tenant pile up hung probes by
    cancelling its calls.
    """

    def __init__(self, what: str, workers: int, per_tenant: int, workers_setting: str,
                 per_tenant_setting: str) -> None:
        if not 1 <= per_tenant < workers:
            raise ValueError(f"{what}: per-tenant limit {per_tenant} must be below the {workers} workers")
        self.what = what
        self.workers = workers
        self.per_tenant = per_tenant
        self._workers_setting = workers_setting
        self._per_tenant_setting = per_tenant_setting
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=what.replace(" ", "-"))
        self._busy = 0
        self._running: Counter[str] = Counter()
        # Insertion order is the round-robin order of the tenants waiting for a thread.
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def running(self, tenant: str) -> int:
        return self._running[tenant]

    @property
    def busy(self) -> int:
        return self._busy

    async def run(self, tenant: str, wait_s: float, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on a thread of this pool for ``tenant``.

        Waits at most ``wait_s`` for a thread; raises LimitExceeded naming the limit that kept
        it waiting.
        """
        self._loop = asyncio.get_running_loop()
        if not self._try_reserve(tenant):
            await self._wait_for_slot(tenant, wait_s)
        try:
            work = self._executor.submit(fn, *args)
        except BaseException:
            self._release(tenant)
            raise
        work.add_done_callback(lambda _: self._release_from_thread(tenant))
        # Cancelling this await leaves a started probe running to its own deadline; its slot
        # is given back when the thread ends (the callback above), not here.
        return await asyncio.wrap_future(work)

    def _try_reserve(self, tenant: str) -> bool:
        if self._busy < self.workers and self._running[tenant] < self.per_tenant and not self._waiting:
            self._reserve(tenant)
            return True
        return False

    def _reserve(self, tenant: str) -> None:
        self._busy += 1
        self._running[tenant] += 1

    async def _wait_for_slot(self, tenant: str, wait_s: float) -> None:
        assert self._loop is not None
        slot: asyncio.Future[None] = self._loop.create_future()
        self._waiting.setdefault(tenant, deque()).append(slot)
        # A slot may have been free for this tenant while others waited for theirs.
        self._dispatch()
        try:
            await asyncio.wait_for(asyncio.shield(slot), timeout=max(0.0, wait_s))
            return
        except (TimeoutError, asyncio.CancelledError) as exc:
            if slot.done() and not slot.cancelled():
                # Handed a thread just as the wait ended: give it back to the next in line.
                self._release(tenant)
            else:
                slot.cancel()
                self._drop_waiter(tenant, slot)
            if isinstance(exc, asyncio.CancelledError):
                raise
        if self._running[tenant] >= self.per_tenant:
            raise LimitExceeded(
                f"{self.per_tenant} {self.what} of tenant {tenant!r} are running and none finished within "
                f"{wait_s:.0f}s ({self._per_tenant_setting}={self.per_tenant}); retry when they end")
        raise LimitExceeded(f"all {self.workers} workers for {self.what} stayed busy for {wait_s:.0f}s "
                            f"({self._workers_setting}={self.workers}); retry later")

    def _drop_waiter(self, tenant: str, slot: asyncio.Future[None]) -> None:
        queue = self._waiting.get(tenant)
        if queue is None:
            return
        try:
            queue.remove(slot)
        except ValueError:
            pass
        if not queue:
            del self._waiting[tenant]

    def _dispatch(self) -> None:
        """Give free threads to waiting tenants in turn, skipping tenants at their own limit."""
        while self._busy < self.workers:
            for tenant in list(self._waiting):
                queue = self._waiting[tenant]
                while queue and queue[0].done():
                    queue.popleft()
                if not queue:
                    del self._waiting[tenant]
                    continue
                if self._running[tenant] >= self.per_tenant:
                    continue
                slot = queue.popleft()
                # This tenant goes to the back of the line.
                del self._waiting[tenant]
                if queue:
                    self._waiting[tenant] = queue
                self._reserve(tenant)
                slot.set_result(None)
                break
            else:
                return

    def _release(self, tenant: str) -> None:
        self._busy -= 1
        self._running[tenant] -= 1
        if self._running[tenant] <= 0:
            del self._running[tenant]
        self._dispatch()

    def _release_from_thread(self, tenant: str) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._release, tenant)
        except RuntimeError:
            pass  # the loop is closed: the controller is stopping and nothing waits any more

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class SubmitRate:
    """A token bucket per tenant: ``burst`` submissions at once, refilled at ``per_min`` a minute."""

    def __init__(self, per_min: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_min = per_min
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, tenant: str) -> None:
        now = self._clock()
        tokens, then = self._buckets.get(tenant, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_min / 60.0)
        if tokens < 1.0:
            self._buckets[tenant] = (tokens, now)
            wait = (1.0 - tokens) * 60.0 / self.per_min
            raise LimitExceeded(
                f"tenant {tenant!r} is over its submit rate ({self.burst} at once, then {self.per_min:g} a minute: "
                f"{ENV}SUBMIT_BURST={self.burst}, {ENV}SUBMIT_RATE_PER_MIN={self.per_min:g}); "
                f"retry in {wait:.1f}s")
        self._buckets[tenant] = (tokens - 1.0, now)


class CallGate:
    """Concurrent calls per tenant (unary and streaming counted apart) and over all tenants."""

    def __init__(self, calls_per_tenant: int, streams_per_tenant: int, total: int) -> None:
        self.calls_per_tenant = calls_per_tenant
        self.streams_per_tenant = streams_per_tenant
        self.total = total
        self._calls: Counter[str] = Counter()
        self._streams: Counter[str] = Counter()
        self._open = 0

    def open_calls(self, tenant: str) -> int:
        return self._calls[tenant]

    def open_streams(self, tenant: str) -> int:
        return self._streams[tenant]

    def acquire(self, tenant: str, stream: bool) -> Callable[[], None]:
        """Take a slot or raise LimitExceeded; returns the function that gives it back."""
        counts, cap = (self._streams, self.streams_per_tenant) if stream else (self._calls, self.calls_per_tenant)
        if counts[tenant] >= cap:
            what, setting = ("WatchJob streams", "WATCH_STREAMS_PER_TENANT") if stream \
                else ("calls", "CALLS_PER_TENANT")
            raise LimitExceeded(f"tenant {tenant!r} already has {cap} {what} open ({ENV}{setting}={cap}); "
                                "close one or retry later")
        if self._open >= self.total:
            raise LimitExceeded(f"the controller is serving its limit of {self.total} calls "
                                f"({ENV}MAX_CONCURRENT_RPCS={self.total}); retry later")
        counts[tenant] += 1
        self._open += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._open -= 1
            counts[tenant] -= 1
            if counts[tenant] <= 0:
                del counts[tenant]

        return release

    @contextmanager
    def hold(self, tenant: str, stream: bool) -> Iterator[None]:
        release = self.acquire(tenant, stream)
        try:
            yield
        finally:
            release()


class LimitInterceptor(grpc.aio.ServerInterceptor):
    """Holds a per-tenant call slot for the whole of every JobService call.

    Calls without a known tenant pass untouched: the auth interceptor rejects them, and
    health checks and reflection are never limited.
    """

    def __init__(self, auth: Auth, gate: CallGate) -> None:
        self.auth = auth
        self.gate = gate

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_PREFIXES):
            return handler
        tenant = self.auth.tenant_for(details.invocation_metadata)
        if tenant is None:
            return handler
        if handler.unary_unary is not None:
            return _gated_unary(handler, self.gate, tenant)
        if handler.unary_stream is not None:
            return _gated_stream(handler, self.gate, tenant)
        return handler


def _gated_unary(handler: grpc.RpcMethodHandler, gate: CallGate, tenant: str) -> grpc.RpcMethodHandler:
    inner = handler.unary_unary

    async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            with gate.hold(tenant, stream=False):
                return await inner(request, context)
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))

    return grpc.unary_unary_rpc_method_handler(behavior, handler.request_deserializer, handler.response_serializer)


def _gated_stream(handler: grpc.RpcMethodHandler, gate: CallGate, tenant: str) -> grpc.RpcMethodHandler:
    inner = handler.unary_stream

    async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            release = gate.acquire(tenant, stream=True)
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            return
        try:
            async for item in inner(request, context):
                yield item
        finally:
            # Runs when the stream ends, fails or is cancelled by the client.
            release()

    return grpc.unary_stream_rpc_method_handler(behavior, handler.request_deserializer, handler.response_serializer)

