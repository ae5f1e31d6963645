"""Exclusive use of one GPU while it is timed or profiled, across threads and processes of a host.

An evaluator may prepare several candidates at once on one GPU (process start, imports,
Triton and torch.compile compilation, correctness trials) because that work is mostly CPU,
but a *measurement* needs the GPU to itself: another process's kernels running during a
timing loop inflate whichever contender happens to overlap them. The evaluator's timing
phase and the profiler's GPU runs therefore hold this lock.

The lock is an ``flock`` on a file named after the GPU in a directory both services use
(the default lies in the host's temp directory). ``flock`` locks belong to an open file
description, so two threads of one process that each open the file exclude each other as
two processes do, and the kernel drops the lock when a holder dies: a crashed worker never
leaves the GPU locked.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import time
from pathlib import Path
from typing import IO

DEFAULT_DIR = Path(tempfile.gettempdir()) / "kevolve-gpu"


def device_key() -> str:
    """Which GPU this process uses: the first entry of CUDA_VISIBLE_DEVICES, else device 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return re.sub(r"[^A-Za-z0-9_.-]", "_", visible) or "0"


class GpuLock:
    """``acquire()`` blocks until this host's lock on the GPU is ours; ``release()`` gives it back
    (and does nothing when the lock is not held)."""

    def __init__(self, lock_dir: Path = DEFAULT_DIR, key: str | None = None) -> None:
        lock_dir.mkdir(parents=True, exist_ok=True)
        self.path = lock_dir / f"gpu-{key or device_key()}.lock"
        self._fh: IO[bytes] | None = None
        # When it was last held ([taken, given back], epoch seconds; [taken] while held): the
        # GPU time a holder is charged with. Closed before the lock is given up, so the next
        # holder's window starts after this one ends.
        self.window: list[float] = []

    def acquire(self) -> float:
        """Take the lock; returns the seconds spent waiting for it."""
        if self._fh is not None:
            raise RuntimeError(f"{self.path} is already held by this GpuLock")
        started = time.monotonic()
        fh = self.path.open("ab")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        except BaseException:
            fh.close()
            raise
        self._fh = fh
        self.window = [time.time()]
        return time.monotonic() - started

    def release(self) -> None:
        if self._fh is not None:
            self.window.append(time.time())
            fh, self._fh = self._fh, None
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()

    @property
    def held(self) -> bool:
        return self._fh is not None

    def __enter__(self) -> float:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
