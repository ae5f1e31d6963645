"""The work-queue contract every service relies on, against a real nats-server."""

from __future__ import annotations

import asyncio

import pytest

from kevolve import subjects
from kevolve.bus import Bus, Delivery
from kevolve.config import CommonSettings
from kevolve.client.natsd import NatsServer
from kevolve.v1 import work_pb2


async def test_message_survives_a_consumer_that_dies_before_acking(settings: CommonSettings) -> None:
    bus = await Bus.connect(settings, "test")
    await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(job_id="j1", expansion_id="e1"), msg_id="e1")

    got: list[tuple[str, int]] = []
    stop = asyncio.Event()

    async def handler(msg: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        got.append((msg.expansion_id, delivery.num_delivered))
        stop.set()

    consumer = bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, handler)
    # A consumer that takes the message and then "crashes" (never acks).
    sub = await consumer.subscribe()
    taken = await sub.fetch(1, timeout=5)
    assert work_pb2.ExpandRequest.FromString(taken[0].data).expansion_id == "e1"
    await sub.unsubscribe()

    await asyncio.wait_for(consumer.run(stop), timeout=settings.ack_wait_s + 10)
    assert got == [("e1", 2)]  # redelivered after AckWait, not lost
    await bus.close()


async def test_duplicate_publish_is_stored_once(settings: CommonSettings) -> None:
    bus = await Bus.connect(settings, "test")
    for _ in range(3):
        await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="same"), msg_id="same")
    info = await bus.js.stream_info(subjects.STREAM)
    assert info.state.messages == 1
    await bus.close()


async def test_malformed_payload_is_terminated_not_looped(settings: CommonSettings) -> None:
    bus = await Bus.connect(settings, "test")
    await bus.js.publish(subjects.EXPAND, b"\xff\xff\xff not protobuf")
    await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="good"), msg_id="good")
    seen: list[str] = []
    stop = asyncio.Event()

    async def handler(msg: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        seen.append(msg.expansion_id)
        stop.set()

    await asyncio.wait_for(bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, handler).run(stop), timeout=10)
    assert seen == ["good"]
    await asyncio.sleep(0.2)
    info = await bus.js.stream_info(subjects.STREAM)
    assert info.state.messages == 0  # the malformed one was terminated, the good one acked
    await bus.close()


async def test_handler_failure_retries_then_gives_up_with_a_result(settings: CommonSettings) -> None:
    bus = await Bus.connect(settings, "test")
    await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="bad"), msg_id="bad")
    attempts: list[int] = []
    gave_up: list[str] = []
    stop = asyncio.Event()

    async def handler(msg: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        attempts.append(delivery.num_delivered)
        raise RuntimeError("boom")

    async def give_up(msg: work_pb2.ExpandRequest, delivery: Delivery, exc: BaseException) -> None:
        gave_up.append(f"{msg.expansion_id}:{exc}")
        stop.set()

    consumer = bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, handler, on_give_up=give_up)
    await asyncio.wait_for(consumer.run(stop), timeout=30)
    assert attempts == [1, 2, 3]
    assert gave_up == ["bad:boom"]
    await bus.close()


@pytest.mark.parametrize("after_s", [0.0, 0.5, 1.5])
async def test_closing_after_nats_died_does_not_raise(nats_server: NatsServer, settings: CommonSettings,
                                                      after_s: float) -> None:
    # A service shutting down after losing NATS must still finish its shutdown (close its
    # database, stop its metrics) instead of dying on a broken pipe while flushing, or on a
    # reset socket of the reconnect attempt in flight when it closes (the later delays; CI
    # once failed that way).
    bus = await Bus.connect(settings, "test")
    await bus.nc.publish("kv.test.unsent", b"x" * 1024)
    nats_server.stop(kill=True)
    await asyncio.sleep(after_s)
    await bus.close()
    assert bus.nc.is_closed


async def test_an_ack_that_times_out_in_a_nats_stall_leaves_the_worker_consuming(
        nats_server: NatsServer, settings: CommonSettings) -> None:
    # NATS stalls (SIGSTOP) right as a handler finishes, so its ack times out: the worker must
    # log it and go on with the next message instead of dying with the ack's TimeoutError.
    import os
    import signal

    from kevolve.bus import MESSAGES

    bus = await Bus.connect(settings, "test")
    await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="first"), msg_id="first")
    got: list[str] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    failed_before = MESSAGES.labels(subjects.EXPAND, "ack_failed")._value.get()

    async def handler(msg: work_pb2.ExpandRequest, delivery: Delivery) -> None:
        got.append(msg.expansion_id)
        if msg.expansion_id == "first":
            await bus.publish(subjects.EXPAND, work_pb2.ExpandRequest(expansion_id="second"), msg_id="second")
            os.kill(nats_server.process.pid, signal.SIGSTOP)
            loop.call_later(2.5, os.kill, nats_server.process.pid, signal.SIGCONT)
        else:
            stop.set()

    consumer = bus.consumer(subjects.EXPAND, work_pb2.ExpandRequest, handler)
    try:
        await asyncio.wait_for(consumer.run(stop), timeout=30)
    finally:
        os.kill(nats_server.process.pid, signal.SIGCONT)
    assert got[0] == "first" and got[-1] == "second"
    assert MESSAGES.labels(subjects.EXPAND, "ack_failed")._value.get() == failed_before + 1
    await bus.close()
