"""The evaluator's cache of reference runs on its scratch disk, bounded in entries and bytes.

A reference run at a spec's production sizes holds its inputs, weights and expected outputs:
up to several GiB. Kept by count alone, a pool that served a few dozen large jobs filled its
host's disk, and every later evaluation failed for disk (INFRA_ERROR, ``infra:disk``) while
the cache held runs no job needed any more. The cache now keeps to a byte budget as well, and
gives its least recently used runs back before an evaluation is refused for disk. A run an
evaluation is using (pinned from its lookup to the end of the evaluation) is never removed.
"""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class ReferenceCache:
    """Reference runs under ``root``, one directory each (names starting with ``.`` are runs
    being written); the most recently used are kept."""

    def __init__(self, root: Path, max_entries: int, max_bytes: int) -> None:
        self.root = root
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._pins: Counter[str] = Counter()
        self._lock = threading.Lock()
        root.mkdir(parents=True, exist_ok=True)

    def pin(self, name: str) -> None:
        """Keep run ``name`` until as many ``unpin`` calls: an evaluation reads it."""
        with self._lock:
            self._pins[name] += 1

    def unpin(self, name: str) -> None:
        with self._lock:
            self._pins[name] -= 1
            if self._pins[name] <= 0:
                del self._pins[name]

    def trim(self, free_bytes: int = 0) -> int:
        """Remove the least recently used runs that no evaluation is reading until at most
        ``max_entries`` runs of ``max_bytes`` together remain and, when ``free_bytes`` is
        given, the disk has that much free. Returns the bytes removed."""
        with self._lock:
            entries = sorted((p for p in self.root.iterdir() if not p.name.startswith(".")),
                             key=lambda p: p.stat().st_mtime)
            sizes = {p: _size(p) for p in entries}
            count, total, removed = len(entries), sum(sizes.values()), 0
            for entry in entries:
                over = count > self.max_entries or total > self.max_bytes or (
                    free_bytes and shutil.disk_usage(self.root).free < free_bytes)
                if not over:
                    break
                if self._pins.get(entry.name):
                    continue
                shutil.rmtree(entry, ignore_errors=True)
                count, total, removed = count - 1, total - sizes[entry], removed + sizes[entry]
            if removed:
                log.info("reference cache trimmed", removed_mb=removed // 2**20, kept=count,
                         kept_mb=total // 2**20)
            return removed
