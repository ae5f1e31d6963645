"""Whether each evaluator and profiler pool takes its work.

A job for a platform whose pool never runs would wait forever without a word: its
evaluation requests sit in JetStream with no consumer pulling them. The controller creates
every platform's durable consumers when it starts (so a pool scaled to zero is scaled up by
the lag of a consumer that exists), and this watch reads each one's state: work pending,
no replica asking for work and none holding any is a stall. A stall past ``pool_wait_s``
ends the jobs waiting on that pool, naming it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import structlog

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.platforms import Platform

log = structlog.get_logger("controller.pools")


def work_subjects(platforms: Iterable[Platform]) -> list[str]:
    """Every pool's work subject: evaluation and profiling per platform."""
    return sorted({s for p in platforms for s in (subjects.eval_subject(p.name), subjects.profile_subject(p.name))})


def subjects_of(platform: Platform) -> list[str]:
    """The evaluation subjects a job on ``platform`` waits on (its screening pool's too)."""
    names = [platform.name] + ([platform.screen_on] if platform.screen_on else [])
    return [subjects.eval_subject(n) for n in names]


class PoolWatch:
    def __init__(self, bus: Bus, wait_s: float) -> None:
        self.bus = bus
        self.wait_s = wait_s
        self.every_s = min(5.0, wait_s / 4)
        self._stalled_since: dict[str, float] = {}
        self._checked_at = 0.0

    async def ensure(self, platforms: Iterable[Platform]) -> None:
        for subject in work_subjects(platforms):
            await self.bus.ensure_consumer(subject)

    async def stalled(self, watched: Iterable[str], now: float | None = None) -> dict[str, float]:
        """Subjects among ``watched`` stalled for ``wait_s`` or longer, with how long; read at
        most every ``every_s`` seconds."""
        now = time.monotonic() if now is None else now
        if now - self._checked_at < self.every_s:
            return self._overdue(now)
        self._checked_at = now
        watched = set(watched)
        for subject in watched:
            state = await self.bus.consumer_state(subject)
            if state is not None and not state.stalled:
                self._stalled_since.pop(subject, None)
            elif state is not None or subject not in self._stalled_since:
                self._stalled_since.setdefault(subject, now)
        for subject in set(self._stalled_since) - watched:
            del self._stalled_since[subject]
        return self._overdue(now)

    def _overdue(self, now: float) -> dict[str, float]:
        return {s: now - t for s, t in self._stalled_since.items() if now - t >= self.wait_s}


def stall_reason(platform: str, subject: str, waited_s: float) -> str:
    pool = subject.removeprefix("kv.work.eval.")
    return (f"no evaluator pool serves platform {pool!r}: work for it waited {waited_s:.0f}s with nothing taking it "
            f"(start one: `kevolve up --platform {pool}`, or deploy the {pool} evaluator)"
            + (f"; the job's platform is {platform!r}" if pool != platform else ""))
