"""JetStream work queues with explicit acks, shared by every service.

A consumer fetches one message at a time per slot, heartbeats ``in_progress`` while the
handler runs (so long evaluations are not redelivered), and acks only after the handler's
side effects (object-store writes, published results) are done. A handler that raises is
NAKed with a delay and retried up to ``max_deliver`` times; on the last delivery the
handler's ``on_give_up`` publishes a failure result instead, so nothing accepted vanishes.
Undecodable payloads are terminated at once (they can never succeed) and counted.

Acks, NAKs and heartbeats are requests to the server and fail when NATS stalls or restarts.
Such a failure is logged and counted, never raised: the message was not settled, so
JetStream delivers it again after AckWait, and the worker goes on with the next one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import nats
import structlog
from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError
from prometheus_client import Counter, Gauge, Histogram

from kevolve import subjects
from kevolve.config import CommonSettings

log = structlog.get_logger("kevolve.bus")

M = TypeVar("M", bound=Message)

MESSAGES = Counter(
    "kevolve_bus_messages_total", "Work messages handled, by subject and outcome", ["subject", "outcome"]
)
HANDLE_SECONDS = Histogram(
    "kevolve_bus_handle_seconds",
    "Time a handler spent on one work message",
    ["subject"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600),
)
QUEUE_WAIT_SECONDS = Histogram(
    "kevolve_bus_queue_wait_seconds",
    "Time a work message waited in JetStream before a consumer took it",
    ["subject"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900),
)
CONSUMER_PENDING = Gauge(
    "kevolve_bus_consumer_pending", "Messages waiting for a JetStream consumer (lag)", ["subject"]
)
CONSUMER_ACK_PENDING = Gauge(
    "kevolve_bus_consumer_ack_pending", "Messages delivered but not yet acked", ["subject"]
)


@dataclass(frozen=True)
class ConsumerState:
    pending: int        # messages not yet delivered to any replica
    waiting_pulls: int  # replicas asking for work right now
    in_progress: int    # delivered, not yet acked

    @property
    def stalled(self) -> bool:
        """Work waits and no replica takes or holds any: nothing serves the subject now."""
        return self.pending > 0 and self.waiting_pulls == 0 and self.in_progress == 0


@dataclass(frozen=True)
class Delivery:
    """What a handler knows about the delivery it is handling."""

    subject: str
    num_delivered: int
    last_attempt: bool


class Bus:
    """One NATS connection plus the JetStream work stream."""

    def __init__(self, nc: NATS, js: JetStreamContext, settings: CommonSettings) -> None:
        self.nc = nc
        self.js = js
        self.settings = settings

    @classmethod
    async def connect(cls, settings: CommonSettings, name: str) -> Bus:
        async def _err(exc: Exception) -> None:
            log.warning("nats error", error=str(exc))

        nc = await nats.connect(
            servers=[settings.nats_url],
            name=name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            connect_timeout=5,
            error_cb=_err,
        )
        bus = cls(nc, nc.jetstream(timeout=10), settings)
        await bus.ensure_stream()
        return bus

    async def ensure_stream(self) -> None:
        config = StreamConfig(
            name=subjects.STREAM,
            subjects=subjects.STREAM_SUBJECTS,
            retention=RetentionPolicy.WORK_QUEUE,
            storage=StorageType.FILE,
            duplicate_window=120.0,
        )
        try:
            await self.js.add_stream(config)
        except BadRequestError:
            await self.js.update_stream(config)

    def consumer_config(self, subject: str) -> ConsumerConfig:
        """The one durable consumer of a work subject, as every replica of its service (and the
        controller, creating it ahead of them) declares it."""
        return ConsumerConfig(
            durable_name=subjects.durable_name(subject),
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.settings.ack_wait_s,
            max_deliver=self.settings.max_deliver,
            filter_subject=subject,
            max_ack_pending=1000,
        )

    async def ensure_consumer(self, subject: str) -> None:
        """Create the subject's durable consumer if no replica of its service has yet: a pool
        scaled to zero is then scaled up by the lag of a consumer that exists."""
        try:
            await self.js.consumer_info(subjects.STREAM, subjects.durable_name(subject))
        except NotFoundError:
            await self.js.add_consumer(subjects.STREAM, self.consumer_config(subject))

    async def consumer_state(self, subject: str) -> ConsumerState | None:
        """Work waiting on a subject and who is taking it; None when it has no consumer."""
        try:
            info = await self.js.consumer_info(subjects.STREAM, subjects.durable_name(subject))
        except NotFoundError:
            return None
        return ConsumerState(pending=info.num_pending or 0, waiting_pulls=info.num_waiting or 0,
                             in_progress=info.num_ack_pending or 0)

    async def publish(self, subject: str, message: Message, msg_id: str | None = None) -> None:
        """Publish to JetStream and wait for the server's ack; ``msg_id`` de-duplicates retries.

        JetStream de-duplicates per stream, not per subject, and every hop of one expansion
        naturally uses the expansion id: the subject is folded into the id so that the
        retriever's GenerateRequest is not dropped as a duplicate of the controller's
        ExpandRequest (or the generator's candidate of either).
        """
        headers = {"Nats-Msg-Id": f"{subject}:{msg_id}"} if msg_id else None
        await self.js.publish(subject, message.SerializeToString(), headers=headers)

    async def publish_event(self, subject: str, message: Message) -> None:
        """Fire-and-forget core NATS publish (progress events; losing one is harmless)."""
        await self.nc.publish(subject, message.SerializeToString())

    async def close(self) -> None:
        # Consumers have stopped by now (their in-flight work acked or NAKed); drain() would
        # wait out its timeout on the idle pull subscriptions, so flush and close instead.
        if self.nc.is_closed:
            return
        try:
            await self.nc.flush(timeout=2)
        except (OSError, TimeoutError, nats.errors.Error) as exc:
            # NATS already gone (a broken pipe, a timeout): nothing unsent can be saved by
            # raising, and the rest of the shutdown (database, metrics) must still run.
            log.warning("bus flush on close failed", error=repr(exc))
        try:
            await self.nc.close()
        except (OSError, TimeoutError, nats.errors.Error) as exc:
            # nats-py's close() drains the socket of a reconnect attempt in flight; with the
            # server killed that raises ConnectionResetError, which must not abort shutdown.
            log.warning("bus close failed", error=repr(exc))

    def consumer(
        self,
        subject: str,
        message_type: type[M],
        handler: Callable[[M, Delivery], Awaitable[None]],
        *,
        concurrency: int = 1,
        on_give_up: Callable[[M, Delivery, BaseException], Awaitable[None]] | None = None,
    ) -> WorkConsumer[M]:
        return WorkConsumer(self, subject, message_type, handler, concurrency, on_give_up)


class WorkConsumer(Generic[M]):
    """Pull consumer loop for one work subject."""

    def __init__(
        self,
        bus: Bus,
        subject: str,
        message_type: type[M],
        handler: Callable[[M, Delivery], Awaitable[None]],
        concurrency: int,
        on_give_up: Callable[[M, Delivery, BaseException], Awaitable[None]] | None,
    ) -> None:
        self.bus = bus
        self.subject = subject
        self.message_type = message_type
        self.handler = handler
        self.concurrency = max(1, concurrency)
        self.on_give_up = on_give_up
        self.durable = subjects.durable_name(subject)
        self.in_flight = 0

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        return await self.bus.js.pull_subscribe(
            self.subject, durable=self.durable, stream=subjects.STREAM, config=self.bus.consumer_config(self.subject)
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop`` is set; in-flight messages are finished (or NAKed) first."""
        sub = await self.subscribe()
        slots = [asyncio.create_task(self._slot(sub, stop)) for _ in range(self.concurrency)]
        lag = asyncio.create_task(self._watch_lag(sub, stop))
        try:
            await asyncio.gather(*slots)
        finally:
            lag.cancel()

    async def _watch_lag(self, sub: JetStreamContext.PullSubscription, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                info = await sub.consumer_info()
                CONSUMER_PENDING.labels(self.subject).set(info.num_pending or 0)
                CONSUMER_ACK_PENDING.labels(self.subject).set(info.num_ack_pending or 0)
            except Exception:  # the lag gauge must never take the consumer down
                pass
            try:
                await asyncio.wait_for(stop.wait(), timeout=5)
            except TimeoutError:
                pass

    async def _slot(self, sub: JetStreamContext.PullSubscription, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                msgs = await sub.fetch(1, timeout=1)
            except (NatsTimeout, TimeoutError):
                continue
            except (NotFoundError, nats.errors.ConnectionClosedError):
                if stop.is_set():
                    return
                await asyncio.sleep(0.5)
                continue
            except Exception as exc:
                log.warning("fetch failed", subject=self.subject, error=str(exc))
                await asyncio.sleep(0.5)
                continue
            for msg in msgs:
                try:
                    await self._handle(msg)
                except Exception as exc:
                    # The last boundary: whatever one message does, this slot keeps consuming
                    # (the message, unsettled, comes back after AckWait).
                    MESSAGES.labels(self.subject, "error").inc()
                    log.error("message handling failed", subject=msg.subject, error=repr(exc))

    async def _handle(self, msg: Msg) -> None:
        meta = msg.metadata
        num_delivered = int(meta.num_delivered or 1)
        delivery = Delivery(
            subject=msg.subject,
            num_delivered=num_delivered,
            last_attempt=num_delivered >= self.bus.settings.max_deliver,
        )
        if meta.timestamp is not None:
            QUEUE_WAIT_SECONDS.labels(self.subject).observe(max(0.0, time.time() - meta.timestamp.timestamp()))
        try:
            message = self.message_type.FromString(msg.data)
        except DecodeError as exc:
            # A malformed payload can never succeed: terminate it instead of looping.
            MESSAGES.labels(self.subject, "malformed").inc()
            log.error("malformed message terminated", subject=msg.subject, error=str(exc), size=len(msg.data))
            await _settle(msg.term(), "term", msg.subject)
            return
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        started = time.perf_counter()
        self.in_flight += 1
        try:
            await self.handler(message, delivery)
        except asyncio.CancelledError:
            await _settle(msg.nak(), "nak", msg.subject)
            raise
        except Exception as exc:
            heartbeat.cancel()
            if delivery.last_attempt and self.on_give_up is not None:
                log.error("giving up on message", subject=msg.subject, error=repr(exc), attempts=num_delivered)
                try:
                    await self.on_give_up(message, delivery, exc)
                except Exception as give_up_exc:  # leave it for redelivery/advisory
                    log.error("give-up handler failed", error=repr(give_up_exc))
                    await _settle(msg.nak(delay=1), "nak", msg.subject)
                    return
                if await _settle(msg.ack_sync(), "ack", msg.subject):
                    MESSAGES.labels(self.subject, "gave_up").inc()
            else:
                log.warning("handler failed; will retry", subject=msg.subject, error=repr(exc), attempt=num_delivered)
                MESSAGES.labels(self.subject, "retried").inc()
                await _settle(msg.nak(delay=min(30.0, 0.5 * 2**num_delivered)), "nak", msg.subject)
            return
        finally:
            self.in_flight -= 1
            heartbeat.cancel()
            HANDLE_SECONDS.labels(self.subject).observe(time.perf_counter() - started)
        # Handled, but an ack that fails (NATS stalled or restarting) leaves the message to be
        # delivered again after AckWait, exactly as a crash between the handler and its ack would.
        outcome = "ok" if await _settle(msg.ack_sync(), "ack", msg.subject) else "ack_failed"
        MESSAGES.labels(self.subject, outcome).inc()

    async def _heartbeat(self, msg: Msg) -> None:
        interval = max(0.2, self.bus.settings.ack_wait_s / 3)
        while True:
            await asyncio.sleep(interval)
            await _settle(msg.in_progress(), "in_progress", msg.subject)


async def _settle(awaitable: Awaitable[object], what: str, subject: str) -> bool:
    """Run an ack, NAK, term or heartbeat; a failure is logged and reported, never raised."""
    try:
        await awaitable
        return True
    except Exception as exc:
        log.warning(f"{what} failed; JetStream redelivers the message after AckWait", subject=subject,
                    error=repr(exc))
        return False
