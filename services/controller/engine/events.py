"""Job progress events: to WatchJob streams in this process and to kv.events.<job> on core NATS.

Events are notifications, not state: a watcher that falls behind loses events (its queue
is bounded) but every event carries the job snapshot, and WatchJob starts with one.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict

import structlog

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.v1 import job_pb2

log = structlog.get_logger("controller.events")

QUEUE_SIZE = 1000


class EventHub:
    def __init__(self, bus: Bus | None) -> None:
        self.bus = bus
        self._watchers: dict[str, set[asyncio.Queue[job_pb2.JobEvent]]] = defaultdict(set)

    def subscribe(self, job_id: str) -> asyncio.Queue[job_pb2.JobEvent]:
        queue: asyncio.Queue[job_pb2.JobEvent] = asyncio.Queue(QUEUE_SIZE)
        self._watchers[job_id].add(queue)
        return queue

    def unsubscribe(self, job_id: str, queue: asyncio.Queue[job_pb2.JobEvent]) -> None:
        watchers = self._watchers.get(job_id)
        if watchers is not None:
            watchers.discard(queue)
            if not watchers:
                del self._watchers[job_id]

    async def emit(self, kind: str, job: job_pb2.Job, message: str = "",
                   candidate: job_pb2.Candidate | None = None) -> None:
        event = job_pb2.JobEvent(job_id=job.job_id, at=time.time(), kind=kind, message=message, job=job)
        if candidate is not None:
            event.candidate.CopyFrom(candidate)
        for queue in list(self._watchers.get(job.job_id, ())):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                log.warning("watcher too slow; event dropped", job_id=job.job_id, kind=kind)
        if self.bus is not None:
            try:
                await self.bus.publish_event(subjects.events_subject(job.job_id), event)
            except Exception as exc:  # progress events are best-effort by contract
                log.debug("event publish failed", error=str(exc))
