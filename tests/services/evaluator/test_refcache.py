"""The evaluator's reference cache keeps to its entries and bytes, gives way to a short disk,
and never removes a run an evaluation is reading."""

from __future__ import annotations

import collections
import os
import shutil
from pathlib import Path

import pytest

from services.evaluator.refcache import ReferenceCache

MB = 2**20


def _run(cache: ReferenceCache, name: str, mb: int, age: int) -> Path:
    """A cached run of ``mb`` MiB, last used ``age`` seconds ago."""
    path = cache.root / name
    (path / "ref" / "0").mkdir(parents=True)
    (path / "ref" / "0" / "out.pt").write_bytes(b"\0" * (mb * MB))
    when = 1_700_000_000 - age
    os.utime(path, (when, when))
    return path


def _names(cache: ReferenceCache) -> set[str]:
    return {p.name for p in cache.root.iterdir()}


def test_the_least_recently_used_runs_go_first_when_the_bytes_are_over_budget(tmp_path: Path) -> None:
    cache = ReferenceCache(tmp_path / "refcache", max_entries=64, max_bytes=5 * MB)
    for name, age in (("old", 30), ("mid", 20), ("new", 10)):
        _run(cache, name, 2, age)
    (cache.root / ".tmp-writing").mkdir()  # a run being written is not the trim's to take
    assert cache.trim() == 2 * MB
    assert _names(cache) == {"mid", "new", ".tmp-writing"}


def test_a_run_an_evaluation_reads_stays(tmp_path: Path) -> None:
    cache = ReferenceCache(tmp_path / "refcache", max_entries=2, max_bytes=100 * MB)
    _run(cache, "in_use", 1, 30)
    _run(cache, "idle", 1, 20)
    _run(cache, "latest", 1, 10)
    cache.pin("in_use")
    cache.pin("in_use")  # two evaluations of one job
    cache.trim()
    assert _names(cache) == {"in_use", "latest"}
    cache.unpin("in_use")
    cache.max_entries = 1
    cache.trim()
    assert _names(cache) == {"in_use"}  # still read by the other evaluation
    cache.unpin("in_use")
    _run(cache, "next", 1, 5)
    cache.trim()
    assert _names(cache) == {"next"}


def test_cached_runs_give_way_to_a_short_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReferenceCache(tmp_path / "refcache", max_entries=64, max_bytes=100 * MB)
    for name, age in (("a", 30), ("b", 20), ("c", 10)):
        _run(cache, name, 1, age)
    usage = collections.namedtuple("usage", "total used free")

    def disk(path: object) -> tuple[int, int, int]:
        held = sum(f.stat().st_size for f in cache.root.rglob("*") if f.is_file())
        return usage(10 * MB, 8 * MB + held, 2 * MB - held)  # 3 MiB cached leave no room

    monkeypatch.setattr(shutil, "disk_usage", disk)
    assert cache.trim(free_bytes=1 * MB) == 2 * MB  # the two oldest make 1 MiB free
    assert _names(cache) == {"c"}
