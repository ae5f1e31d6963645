"""Reservations of one GPU's memory across the threads and processes of a host.

An evaluator prepares and checks several candidates at once on one GPU (only timing holds the
GPU lock). At production sizes a reference run or a candidate's trials hold gigabytes, and
twelve of them at once ran an 80 GB GPU out of memory: the runs failed for memory that was
not theirs to blame. Each GPU run now reserves what it is expected to hold before it starts,
and waits while the reservations of the runs in flight leave too little room; a run larger
than the whole budget runs alone.

The ledger is a directory of reservation files, one per run, each ``flock``-ed by the process
that made it for as long as the reservation lasts. The kernel drops a dead holder's lock,
so a crashed worker's reservation is recognised and removed by the next process that looks.
A lock on the ledger (``GpuLock``'s flock) makes the count-and-add step atomic.
"""

from __future__ import annotations

import fcntl
import os
import time
import uuid
from pathlib import Path
from typing import IO

from kevolve.exec.gpulock import DEFAULT_DIR, GpuLock, device_key


class GpuMemory:
    """``reserve(nbytes)`` waits for room within ``budget_bytes`` on this host's GPU and
    returns a :class:`Reservation` (a context manager that gives the room back)."""

    def __init__(self, budget_bytes: int, lock_dir: Path = DEFAULT_DIR, key: str | None = None,
                 poll_s: float = 0.25) -> None:
        self.budget = budget_bytes
        self.dir = lock_dir / f"gpu-{key or device_key()}-memory"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.poll_s = poll_s

    def in_use(self) -> int:
        """Bytes the live reservations hold (stale ones, whose holder died, are removed)."""
        with self._ledger():
            return sum(self._live().values())

    def reserve(self, nbytes: int, wait_s: float) -> Reservation:
        """Wait up to ``wait_s`` for ``nbytes`` of room; past that, reserve anyway (a run is
        never held back for good by an estimate). Returns the reservation and how long it
        waited (``Reservation.waited_s``)."""
        started = time.monotonic()
        while True:
            with self._ledger():
                held = sum(self._live().values())
                late = time.monotonic() - started >= wait_s
                if held == 0 or held + nbytes <= self.budget or late:
                    return self._add(nbytes, time.monotonic() - started, overbooked=late and held > 0)
            time.sleep(self.poll_s)

    # -- the ledger -------------------------------------------------------------------------
    def _ledger(self) -> GpuLock:
        """The lock that makes counting and adding one step (a GpuLock on the ledger itself)."""
        return GpuLock(self.dir, key="ledger")

    def _live(self) -> dict[Path, int]:
        """The reservations whose holders are alive (their files still locked)."""
        live: dict[Path, int] = {}
        for entry in self.dir.glob("res-*"):
            try:
                fh = entry.open("rb")
            except FileNotFoundError:
                continue
            with fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    try:
                        live[entry] = int(fh.read() or b"0")
                    except ValueError:
                        live[entry] = 0
                    continue
                entry.unlink(missing_ok=True)  # its holder is gone
        return live

    def _add(self, nbytes: int, waited_s: float, overbooked: bool) -> Reservation:
        path = self.dir / f"res-{os.getpid()}-{uuid.uuid4().hex}"
        fh = path.open("w+b")
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        fh.write(str(int(nbytes)).encode())
        fh.flush()
        return Reservation(path, fh, nbytes, waited_s, overbooked)


class Reservation:
    def __init__(self, path: Path, fh: IO[bytes], nbytes: int, waited_s: float, overbooked: bool) -> None:
        self.path, self._fh, self.nbytes = path, fh, nbytes
        self.waited_s = waited_s
        self.overbooked = overbooked  # taken past its wait, beyond the budget

    def release(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            self.path.unlink(missing_ok=True)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

