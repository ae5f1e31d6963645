"""The per-GPU lock that keeps timing and profiling off each other, and the sandbox's grace time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from kevolve.exec import sandbox
from kevolve.exec.gpulock import GpuLock, device_key


def test_two_holders_never_overlap(tmp_path: Path) -> None:
    spans: list[tuple[float, float]] = []
    windows: list[list[float]] = []
    waits: list[float] = []

    def hold() -> None:
        lock = GpuLock(tmp_path, key="0")
        waits.append(lock.acquire())
        start = time.monotonic()
        time.sleep(0.3)
        spans.append((start, time.monotonic()))
        lock.release()
        lock.release()   # not held: nothing happens, the window stays as it was
        windows.append(lock.window)

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))
    assert max(waits) >= 0.5  # the last one queued behind the other two
    # Each lock records when it was held; the windows it reports never overlap either.
    windows.sort()
    assert all(len(w) == 2 and w[1] - w[0] >= 0.3 for w in windows)
    assert all(a[1] <= b[0] for a, b in zip(windows, windows[1:]))


def test_different_gpus_do_not_wait_for_each_other(tmp_path: Path) -> None:
    with GpuLock(tmp_path, key="0"):
        assert GpuLock(tmp_path, key="1").acquire() < 0.1


def test_a_holder_that_dies_frees_the_gpu(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from kevolve.exec.gpulock import GpuLock; "
        f"GpuLock(Path({str(tmp_path)!r}), key='0').acquire(); print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        holder.kill()
        holder.wait()
        started = time.monotonic()
        with GpuLock(tmp_path, key="0"):
            assert time.monotonic() - started < 2
    finally:
        holder.kill()


def test_device_key_follows_cuda_visible_devices(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-3f2a/1,2")
    assert device_key() == "GPU-3f2a_1"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert device_key() == "0"


def test_grace_extends_a_running_childs_timeout(tmp_path: Path) -> None:
    limits = sandbox.Limits(timeout_s=1.0, memory_mb=0)
    grace = sandbox.Grace()

    def extend() -> None:
        time.sleep(0.5)
        grace.seconds += 2.0  # what the evaluator does after queueing 2 s for the GPU

    threading.Thread(target=extend).start()
    ok = sandbox.run(["sleep", "2"], scratch=tmp_path / "a", limits=limits, grace=grace, isolation="off")
    assert ok.killed_for == "" and ok.returncode == 0
    killed = sandbox.run(["sleep", "2"], scratch=tmp_path / "b", limits=limits, isolation="off")
    assert killed.killed_for == "timeout"


def test_a_paused_clock_outlasts_the_time_the_child_had_left(tmp_path: Path) -> None:
    # The evaluator pauses the clock while it queues for the GPU: a queue longer than the
    # candidate's remaining time must not get it killed mid-wait.
    limits = sandbox.Limits(timeout_s=1.0, memory_mb=0)
    grace = sandbox.Grace()

    def queue() -> None:
        time.sleep(0.2)
        grace.pause()
        time.sleep(2.0)
        assert grace.resume() >= 2.0

    waiter = threading.Thread(target=queue)
    waiter.start()
    ok = sandbox.run(["sleep", "2"], scratch=tmp_path / "a", limits=limits, grace=grace, isolation="off")
    waiter.join()
    assert ok.killed_for == "" and ok.returncode == 0
