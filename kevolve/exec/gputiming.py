"""GPU timing, written once: the primitives the evaluator's CUDA timer and the benchmark's
isolated baselines both measure with.

* ``spin(us)``: keep the GPU busy for a lead of a few hundred microseconds before a start
  event (``torch.cuda._sleep``), so the Python side of a call, its launches and
  torch.compile's guards are enqueued before the clock starts and the events measure GPU
  time alone. ``_sleep`` counts clock cycles: the cycles per microsecond are measured once
  per process and device.
* ``L2Flush``: a 256 MiB buffer zeroed before each sample (5x an H100's L2), so every sample
  starts with a cold L2.
* ``sample(call, flush, lead_us)``: one cold-L2 sample (GPU ms, host issue ms, ms until the
  device drained, whether the host enqueued everything within the lead).
* ``copy_bandwidth_gbs()``: the device's best copy rate (read + write), taken after a warm-up
  spin: an idle GPU runs its SMs at a low clock (345 MHz seen on a fresh H100), and a cold
  probe under-reads the rate.
* ``gpu_time_ms(fn)``: (median GPU ms, 10th-percentile host ms) of a call over repeated
  samples, for measurements outside the evaluator (isolated baselines, tools).

torch is needed here; importing this module needs no GPU, calling it does.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

FLUSH_BYTES = 256 * 1024 * 1024
LEAD_US = 300.0
WARM_US = 50_000.0  # GPU spin before the copy-bandwidth probe, so the clocks are up


class GpuMemoryShort(RuntimeError):
    """Too little free GPU memory for the timer's own buffers (flush buffer, bandwidth probe)."""


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


class L2Flush:
    """The buffer whose zeroing evicts L2 before a sample; allocated on first use."""

    def __init__(self, nbytes: int = FLUSH_BYTES) -> None:
        self.nbytes = nbytes
        self._buffer: torch.Tensor | None = None

    def __call__(self) -> None:
        if self._buffer is None:
            try:
                self._buffer = torch.empty(self.nbytes, dtype=torch.int8, device="cuda")
            except torch.OutOfMemoryError as exc:
                raise GpuMemoryShort(f"no GPU memory for the L2 flush buffer: {exc}") from exc
        self._buffer.zero_()


@dataclass(frozen=True)
class Sample:
    gpu_ms: float       # start event to end event
    host_ms: float      # how long the call took the host to issue
    drained_ms: float   # start event to an event recorded after a device-wide synchronize
    kept_up: bool       # the host enqueued the call within the lead: the GPU never idled inside it


def sample(call: Callable[[], object], flush: L2Flush, lead_us: float) -> Sample:
    """One cold-L2 call: flush, spin for the lead, start event, call, end event, device-wide sync.

    The drained event (after a device-wide synchronize) exposes work the call left running on
    another stream after its end event."""
    flush()
    start, end, drained = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    enqueue_started = time.perf_counter()
    spin(lead_us)
    start.record()
    call_started = time.perf_counter()
    call()
    host_ms = (time.perf_counter() - call_started) * 1e3
    end.record()
    kept_up = (time.perf_counter() - enqueue_started) * 1e6 < lead_us
    torch.cuda.synchronize()  # device-wide: side-stream work cannot escape
    drained.record()
    torch.cuda.synchronize()
    return Sample(start.elapsed_time(end), host_ms, start.elapsed_time(drained), kept_up)


def copy_bandwidth_gbs(elements: int = 1 << 26, min_elements: int = 1 << 23) -> float:
    """Best device-to-device copy rate (read + write bytes per second) in GB/s.

    ``elements`` fp32 a side (256 MiB: the copy streams from DRAM). Where what other
    processes hold on the GPU leaves too little for that, the buffers are halved, down to
    ``min_elements``, below which :class:`GpuMemoryShort` is raised: the measuring side has
    failed, not whatever it measures."""
    n = elements
    while True:
        try:
            src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
            dst = torch.empty_like(src)
        except torch.OutOfMemoryError as exc:
            torch.cuda.empty_cache()
            if n <= min_elements:
                raise GpuMemoryShort(f"no GPU memory for the copy-bandwidth probe: {exc}") from exc
            n //= 2
            continue
        # An idle GPU's clocks are low and a cold probe under-reads the copy rate, which
        # raises the physical floor a correct kernel near the bandwidth limit is judged
        # against: keep the GPU busy first, so the clocks are up when it is timed.
        spin(WARM_US)
        for _ in range(4):
            dst.copy_(src)
        best = float("inf")
        for _ in range(8):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            torch.cuda.synchronize()
            best = min(best, start.elapsed_time(end))
        gbs = 2 * n * 4 / (best / 1e3) / 1e9
        del src, dst
        torch.cuda.empty_cache()
        return gbs


def gpu_time_ms(fn: Callable[[], object], reps: int = 200, lead_us: float = LEAD_US) -> tuple[float, float]:
    """(median GPU ms, 10th-percentile host ms) of ``fn``, sampled as the evaluator samples.

    ``triton.testing.do_bench`` hides the host's issue work only up to its L2 flush (~85 us on
    an H100), which charges torch.compile's wrapper for small problems; the lead hides it
    whole, and the host time is returned beside the GPU time."""
    flush = L2Flush()
    fn()  # warm: compiles, first touch
    samples = [sample(fn, flush, lead_us) for _ in range(reps)]
    return percentile([s.gpu_ms for s in samples], 0.5), percentile([s.host_ms for s in samples], 0.1)
