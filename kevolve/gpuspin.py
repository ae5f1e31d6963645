"""Keep a GPU busy for a set time, so the host's issue work is queued before a timed call starts.

Both the evaluator's CUDA timer and the bench scripts' isolated baselines spin the GPU
(``torch.cuda._sleep``) for a lead of a few hundred microseconds before each start event:
the Python side of a call, its launches and torch.compile's guards are then enqueued
before the clock starts, and the events measure GPU time alone. ``_sleep`` counts clock
cycles, so the cycles per microsecond are measured once per process and device.
"""

from __future__ import annotations

import functools

import torch


@functools.cache
def _cycles_per_us(device: int) -> float:
    probe = 1_000_000
    torch.cuda._sleep(probe)  # first call: module load
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(probe)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return probe / max(min(times), 1e-3)


def spin(us: float) -> None:
    """Enqueue ``us`` microseconds of GPU busy-waiting on the current stream (returns at once)."""
    torch.cuda._sleep(int(us * _cycles_per_us(torch.cuda.current_device())))


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile by rank (no interpolation); 0.0 for no values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0
