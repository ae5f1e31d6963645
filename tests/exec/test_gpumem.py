"""GPU memory reservations: runs wait for room within the budget, a run larger than the budget
runs alone, a dead holder's reservation is freed, and no run waits past its limit."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from kevolve.exec.gpumem import GpuMemory

GB = 2**30


def test_runs_that_fit_together_do_not_wait_and_the_next_waits_for_room(tmp_path: Path) -> None:
    ledger = GpuMemory(10 * GB, tmp_path, key="0", poll_s=0.02)
    first = ledger.reserve(4 * GB, wait_s=60)
    second = ledger.reserve(5 * GB, wait_s=60)
    assert first.waited_s < 0.5 and second.waited_s < 0.5 and ledger.in_use() == 9 * GB
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(ledger.reserve(3 * GB, wait_s=60)))
    waiter.start()
    time.sleep(0.3)
    assert not got  # 9 + 3 GiB is over the budget: it waits
    first.release()
    waiter.join(timeout=10)
    assert got and got[0].waited_s >= 0.3 and ledger.in_use() == 8 * GB
    second.release()
    got[0].release()
    assert ledger.in_use() == 0


def test_a_run_larger_than_the_budget_runs_alone(tmp_path: Path) -> None:
    ledger = GpuMemory(10 * GB, tmp_path, key="0", poll_s=0.02)
    with ledger.reserve(25 * GB, wait_s=60) as big:
        assert big.waited_s < 0.5 and not big.overbooked
        started = time.monotonic()
        small = ledger.reserve(1 * GB, wait_s=0.3)  # gives up waiting: starts anyway, said so
        assert time.monotonic() - started >= 0.3 and small.overbooked
        small.release()
    assert ledger.in_use() == 0


def test_a_holder_that_dies_gives_its_reservation_back(tmp_path: Path) -> None:
    code = (
        "import time; from pathlib import Path; from kevolve.exec.gpumem import GpuMemory; "
        f"r = GpuMemory(10 * 2**30, Path({str(tmp_path)!r}), key='0').reserve(9 * 2**30, wait_s=5); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        ledger = GpuMemory(10 * GB, tmp_path, key="0", poll_s=0.02)
        assert ledger.in_use() == 9 * GB
        holder.kill()
        holder.wait()
        with ledger.reserve(8 * GB, wait_s=60) as room:
            assert room.waited_s < 1 and not room.overbooked
    finally:
        holder.kill()


def test_different_gpus_keep_separate_budgets(tmp_path: Path) -> None:
    with GpuMemory(10 * GB, tmp_path, key="0").reserve(10 * GB, wait_s=60):
        with GpuMemory(10 * GB, tmp_path, key="1").reserve(10 * GB, wait_s=0.1) as other:
            assert not other.overbooked
