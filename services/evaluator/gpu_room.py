"""GPU memory held by a pool's runs: each reference run, baseline run and candidate on one GPU
reserves what it is expected to hold before it starts (``kevolve.exec.gpumem``), so twelve
production-size evaluations at once wait for room instead of running the GPU out of memory
and failing for memory that was not theirs.

The budget is 90% of the GPU's memory as ``nvidia-smi`` reports it (the worker never starts
CUDA to ask), or ``KEVOLVE_EVALUATOR_GPU_MEMORY_MB``; 0 turns reservations off.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import structlog

from kevolve.exec.gpulock import device_key
from kevolve.exec.gpumem import GpuMemory

from .config import EvaluatorSettings
from .plan import EvalJob
from .protocol import EvalPlan

log = structlog.get_logger(__name__)

# What a CUDA context, cuBLAS and Triton's workspaces and the allocator's slack take beyond
# the tensors a run holds.
GPU_OVERHEAD = 3 * 2**30 // 2


def gpu_bytes(plan: EvalPlan, ref_dir: Path) -> int:
    """What a candidate or baseline run holds on the GPU at once, at most: the weights, one
    trial's inputs (and a copy), its outputs three times (the run's own, the expected ones
    the worker compares them with, one in flight), and the context."""
    largest = 0
    for case in plan.cases:
        files = [(f.name, f.stat().st_size) for f in (ref_dir / "ref" / str(case.index)).iterdir()]
        weights = sum(size for name, size in files if name == "state.pt")
        inputs = max((size for name, size in files if name.startswith("inputs_")), default=0)
        outputs = max((size for name, size in files if name.startswith("expected_")), default=0)
        largest = max(largest, weights + 2 * inputs + 3 * outputs)
    return largest + GPU_OVERHEAD


def gpu_budget(settings: EvaluatorSettings) -> int:
    """Bytes of GPU memory the pool's runs may reserve together (0: no reservations)."""
    if settings.gpu_memory_mb >= 0:
        return settings.gpu_memory_mb * 2**20
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits",
                              "-i", device_key()], capture_output=True, text=True, timeout=10)
        return int(int(out.stdout.split()[0]) * 0.9) * 2**20 if out.returncode == 0 else 0
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return 0


class GpuRoom:
    """The pool's reservations on this worker's GPU; the budget is read when the first GPU
    job comes."""

    def __init__(self, settings: EvaluatorSettings) -> None:
        self.settings = settings
        self._ledger: GpuMemory | None = None
        self._read = False
        self._lock = threading.Lock()

    def ledger(self) -> GpuMemory | None:
        with self._lock:
            if not self._read:
                self._read = True
                budget = gpu_budget(self.settings)
                self._ledger = GpuMemory(budget, self.settings.gpu_lock_dir) if budget else None
            return self._ledger

    @contextlib.contextmanager
    def hold(self, job: EvalJob, need: Callable[[int], int]) -> Iterator[None]:
        """Hold ``need(budget)`` bytes while the block runs (GPU jobs only; nothing where
        reservations are off)."""
        ledger = self.ledger() if job.platform.runner == "cuda" else None
        nbytes = need(ledger.budget) if ledger is not None else 0
        if ledger is None or nbytes <= 0:
            yield
            return
        with ledger.reserve(nbytes, self.settings.gpu_memory_wait_s) as room:
            if room.waited_s >= 1 or room.overbooked:
                log.info("waited for GPU memory", seconds=round(room.waited_s, 1), gib=round(nbytes / 2**30, 2),
                         overbooked=room.overbooked)
            yield
