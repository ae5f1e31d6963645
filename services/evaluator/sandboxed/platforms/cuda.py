"""CUDA timing: cold-L2 CUDA-event timing of the candidate and its baselines, interleaved.

Per sample: perturb the inputs in place (new contents every call, so a result cache keyed
on contents or pointers never hits; inputs rotate over a few sets so pointers change too),
flush L2 by zeroing a 256 MB buffer, keep the GPU spinning for the lead (``LEAD_US`` or
more, see there; so the Python side of forward, its launches included, is enqueued before
the start event is reached),
record a start event, call forward, record an end event, then a device-wide synchronize.
The candidate, eager PyTorch and torch.compile (default mode, specialised to the case's
shape) take turns sample by sample in a rotating order, so anything that slows the GPU for
a while slows all three alike. A contender's time is its median GPU time; ``cv`` is the
coefficient of variation of the batch medians, and batches are added until it falls under
2% (or the budget ends).

After the samples comes the **call loop**: each contender called back to back, as an eager
model calls its modules, between two events (warm L2, no lead, no flush), so the time per call
includes whatever the host needs to issue it: a wrapper that spends 80 us of Python per call
on a 20 us kernel costs 80 us here. Rounds rotate over the contenders; each round's calls
take distinct input sets (clones of the prepared ones, as many as fit ``LOOP_SET_BYTES``),
all perturbed before the round, so a result cache keyed on pointers or contents misses here
too. The fitness uses this view unless the job says its model runs under CUDA graphs.

Which contenders are sampled is the context's choice (``TimingContext.sampled``): a job's
baselines are sampled once, by a process that holds no candidate code, and its full-stage
candidates sample themselves alone, by this same method and with the lead all three would
set; the call loop, whose times follow the host's load of the moment, always interleaves all
three. A confirmation run samples all three interleaved.

A sample whose enqueueing took longer than the lead (a host busy with other candidates'
compiles) could have left the GPU idle inside the timed window; it is taken again, up to
``RETRIES`` times, and then kept as measured: a forward that spends more than the lead on
the host (computing on the CPU, say) is charged for the GPU idling it causes. The host time
a call needs to issue its work is reported beside the GPU time (``*_host_ms``), not charged
(see ``time_case``).

Also measured: the device's copy bandwidth (once per process), which gives the physical
floor ``bytes_moved / bandwidth`` the harness uses to flag impossible times, and the time
from the start event to an event recorded *after* a device-wide synchronize, which exposes
work a candidate leaves running on another stream after its end event.

The primitives (the lead spin, the L2 flush, one sample, the copy-bandwidth probe) are
``kevolve.exec.gputiming``'s, which the benchmark's isolated baselines use as well.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import triton

from kevolve.exec import gputiming
from kevolve.exec.gputiming import GpuMemoryShort, L2Flush
from kevolve.platforms import Platform

from .base import CaseTiming, Speed, TimerInfraError, TimingContext

TARGET_CV = 0.02
MIN_BATCHES, MAX_BATCHES = 5, 40
# Aim for this much kernel time per batch, within these sample counts. Each sample costs
# the lead, an L2 flush and two synchronizations besides the call (~0.5 ms for any
# contender), all while the GPU lock is held, which serializes a GPU pool's candidates.
# 5 batches of up to 60 give each contender 300 samples, a third of the 200-per-batch loop
# whose batch medians varied by 0.15% on an H100 (2026-11-22,
# docs/measurements/2026-11-22-suite-cuda-h100-12-specs/notes.md).
BATCH_KERNEL_MS = 6.0
MIN_PER_BATCH, MAX_PER_BATCH = 10, 60
MAX_CASE_S = 120.0  # timing budget per case (all three contenders)
INPUT_SETS = 3
# GPU spin before each start event, so a contender's host-side issue work is queued before
# the clock starts: at least LEAD_US, and twice the slowest contender's measured issue time
# up to MAX_LEAD_US. On an evaluator host preparing a dozen candidates at once, issue times
# of 0.4-0.85 ms were measured (H100, 2026-11-23: batch_event_truncate, jagged_sum's
# torch.compile), and a fixed 300 us lead let the GPU idle inside their timed window. Host
# work that waits on the GPU (a copy back to compute on the CPU) is charged whatever the lead.
LEAD_US = gputiming.LEAD_US
MAX_LEAD_US = 1500.0
RETRIES = 3
# The call loop: enough calls per round for about LOOP_TARGET_MS of work (at least 3: a call
# of several ms hides its host work anyway, and 10 of them per round would add seconds to
# every evaluation of a whole network), rounds interleaved over the contenders, the median
# round kept. Distinct input sets per call up to
# LOOP_SET_BYTES of clones (small inputs, where host time matters most, never repeat a set
# within a round; large ones rotate, and their calls are GPU-bound anyway).
LOOP_TARGET_MS = 5.0
MIN_LOOP_CALLS, MAX_LOOP_CALLS = 3, 100
LOOP_ROUNDS = 7
LOOP_SET_BYTES = 512 * 2**20
# torch.compile of a reference module built ahead of its request by a GPU pool's spare child
# (``build_ahead``), by the module's id: the candidate's ``prepare`` takes it from here.
_COMPILED: dict[int, tuple[torch.nn.Module, Callable[..., Any]]] = {}


def _smi(query: str) -> str:
    try:
        out = subprocess.run(
            [
                "nvidia-smi",
                f"--query-gpu={query}",
                "--format=csv,noheader,nounits",
                "-i",
                str(torch.cuda.current_device()),
            ],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


class CudaTimer:
    speed: Speed = "measured"
    device = "cuda"

    def __init__(self, name: str, max_case_s: float = MAX_CASE_S) -> None:
        self.name = name
        self.max_case_s = max_case_s
        self._flush = L2Flush()
        self._peak_gbps = 0.0
        self._lead_us = LEAD_US
        self._prepared: dict[str, tuple[list[Any], dict[str, Callable[[Sequence[Any]], Any]]]] = {}
        # Where preparing the timing and the timing went, summed over cases (seconds; the
        # candidate's phases).
        self.phases_s: dict[str, float] = {}
        # Cases whose torch.compile baseline was built ahead of this request (by a spare).
        self._built_ahead: set[str] = set()

    def _lap(self, name: str, since: float, step: str = "prepare_timing") -> float:
        now = time.perf_counter()
        key = f"{step}.{name}"
        self.phases_s[key] = round(self.phases_s.get(key, 0.0) + now - since, 3)
        return now

    # -- environment -----------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env = {
            "gpu": props.name,
            "sm_count": str(props.multi_processor_count),
            "capability": f"{props.major}.{props.minor}",
            "memory_gb": f"{props.total_memory / 2**30:.1f}",
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cuda": str(torch.version.cuda),
            "peak_copy_gbps": f"{self._peak_gbps:.0f}",
        }
        fields = (
            "driver_version",
            "clocks.sm",
            "clocks.mem",
            "clocks.max.sm",
            "power.limit",
            "persistence_mode",
        )
        values = _smi(",".join(fields)).split(",")
        if len(values) == len(fields):
            env.update({f: v.strip() for f, v in zip(fields, values, strict=True)})
        return env

    # -- primitives ------------------------------------------------------------------------
    def _flush_l2(self) -> None:
        try:
            self._flush()
        except GpuMemoryShort as exc:
            raise TimerInfraError(str(exc)) from exc

    def peak_bandwidth_gbps(self) -> float:
        """Best device-to-device copy rate (read + write bytes), measured once per process
        (``gputiming.copy_bandwidth_gbs``: warmed-up clocks, 256 MiB a side).

        A GPU pool runs several candidate processes on one GPU, and what they hold can leave
        too little for the copy (2 GiB a process at first: 6 candidates of one H100 run were
        failed as out of memory by it); the probe then halves its buffers, and if even 32 MiB
        a side does not fit, the evaluator, not the candidate, has failed (TimerInfraError)."""
        if not self._peak_gbps:
            try:
                self._peak_gbps = gputiming.copy_bandwidth_gbs()
            except GpuMemoryShort as exc:
                raise TimerInfraError(str(exc)) from exc
        return self._peak_gbps

    def _sample(
        self, fn: Callable[[Sequence[Any]], Any], inputs: Sequence[Any], perturb: float
    ) -> tuple[float, float, float, bool]:
        """One cold-L2 call: (GPU event ms, host ms of the call, ms until the device drained,
        whether the host enqueued everything within the lead)."""
        _perturb(inputs, perturb)
        try:
            s = gputiming.sample(lambda: fn(inputs), self._flush, self._lead_us)
        except GpuMemoryShort as exc:
            raise TimerInfraError(str(exc)) from exc
        return s.gpu_ms, s.host_ms, s.drained_ms, s.kept_up

    def _steady_sample(
        self, fn: Callable[[Sequence[Any]], Any], inputs: Sequence[Any], perturb: float
    ) -> tuple[float, float, float, int]:
        """(GPU ms, host ms, async gap ms, retakes): a sample the host did not disturb, if one
        comes within ``RETRIES`` retakes."""
        for retake in range(RETRIES + 1):
            gpu_ms, host_ms, drained_ms, kept_up = self._sample(fn, inputs, perturb)
            if kept_up:
                break
        return gpu_ms, host_ms, drained_ms - gpu_ms, retake

    def _issue_us(self, contenders: dict[str, Callable[[Sequence[Any]], Any]], inputs: Sequence[Any]
                  ) -> dict[str, float]:
        """Each contender's host issue time on this host now (median of 5 calls, microseconds)."""
        issue: dict[str, float] = {}
        with torch.no_grad():
            for name, fn in contenders.items():
                calls = []
                for _ in range(5):
                    torch.cuda.synchronize()
                    started = time.perf_counter()
                    fn(inputs)
                    calls.append((time.perf_counter() - started) * 1e6)
                issue[name] = statistics.median(calls)
        torch.cuda.synchronize()
        return issue

    @staticmethod
    def _lead_from(issue_us: dict[str, float]) -> float:
        """The spin that covers every contender's host issue time (see LEAD_US)."""
        return min(MAX_LEAD_US, max(LEAD_US, 2.0 * max(issue_us.values())))

    def _sync_overhead_ms(self) -> float:
        """What ``_sample``'s drained time adds for a call that does nothing."""
        samples = [self._sample(lambda _: None, [], 1.0) for _ in range(20)]
        return statistics.median(drained - gpu for gpu, _, drained, _ in samples)

    def _loop_sets(self, sets: list[Any], calls: int) -> list[Any]:
        """``sets`` and clones of them: one per call of a loop round where they fit."""
        nbytes = sum(t.numel() * t.element_size() for t in sets[0] if isinstance(t, torch.Tensor))
        wanted = max(len(sets), min(calls, LOOP_SET_BYTES // max(1, nbytes)))
        pool = list(sets)
        try:
            while len(pool) < wanted:
                pool.append([t.clone() if isinstance(t, torch.Tensor) else t for t in sets[len(pool) % len(sets)]])
        except torch.cuda.OutOfMemoryError:  # what the contenders hold leaves no room: rotate fewer
            torch.cuda.empty_cache()
        return pool

    def call_loop(self, contenders: dict[str, Callable[[Sequence[Any]], Any]], sets: list[Any],
                  per_call_ms: float) -> dict[str, float]:
        """Milliseconds per call of each contender called back to back, host included."""
        calls = int(min(MAX_LOOP_CALLS, max(MIN_LOOP_CALLS, LOOP_TARGET_MS / max(per_call_ms, 1e-3))))
        pool = self._loop_sets(sets, calls)
        names = list(contenders)
        rounds: dict[str, list[float]] = {k: [] for k in names}
        with torch.no_grad():
            for r in range(LOOP_ROUNDS):
                for k in range(len(names)):
                    name = names[(r + k) % len(names)]
                    fn = contenders[name]
                    for values in pool:
                        _perturb(values, 1.0 + 1e-3 * (((r * len(names) + k) % 7) - 3))
                    torch.cuda.synchronize()
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    for i in range(calls):
                        fn(pool[i % len(pool)])
                    end.record()
                    torch.cuda.synchronize()
                    rounds[name].append(start.elapsed_time(end) / calls)
        del pool
        return {k: statistics.median(v) for k, v in rounds.items()}

    # -- the baselines -----------------------------------------------------------------------
    def _compiled(self, case: str, reference: torch.nn.Module) -> Callable[..., Any]:
        """``reference`` compiled: the compile built ahead for this very module, else a new one."""
        built = _COMPILED.pop(id(reference), None)
        if built is not None and built[0] is reference:
            self._built_ahead.add(case)
            return built[1]
        return _compile(reference)

    def build_ahead(self, make_inputs: Callable[[int], list[Any]],
                    make_reference: Callable[[], torch.nn.Module]) -> torch.nn.Module:
        """A reference module and its torch.compile, built and called once on each input set
        ``prepare`` will make, before the request that times them (see ``ahead.py``)."""
        reference = make_reference()
        compiled = _compile(reference)
        with torch.no_grad():
            for i in range(INPUT_SETS):
                values = make_inputs(i)
                reference(*values)
                compiled(*values)
                del values
        torch.cuda.synchronize()
        _COMPILED[id(reference)] = (reference, compiled)
        return reference

    # -- the timing loop -------------------------------------------------------------------
    def prepare(self, ctx: TimingContext) -> None:
        """Inputs, baselines and a first call of every contender: the compiles happen here.

        torch.compile, Triton's JIT and any autotuning run now, while another candidate may
        hold the GPU, so the exclusive timing phase is spent on timing."""
        mark = time.perf_counter()
        torch.cuda.synchronize()
        sets = [ctx.make_inputs(i) for i in range(INPUT_SETS)]
        contenders: dict[str, Callable[[Sequence[Any]], Any]] = {}
        if "candidate" in ctx.contenders:
            contenders["candidate"] = ctx.forward
        if "eager" in ctx.contenders or "compile" in ctx.contenders:
            reference = ctx.make_reference()
            if "eager" in ctx.contenders:
                contenders["eager"] = lambda values: reference(*values)
            if "compile" in ctx.contenders:
                compiled = self._compiled(ctx.case, reference)
                contenders["compile"] = lambda values: compiled(*values)
        if not contenders:
            raise ValueError(f"nothing to time: contenders {ctx.contenders!r}")
        mark = self._lap("inputs_and_reference", mark)
        with torch.no_grad():
            for name, fn in contenders.items():
                for values in sets:
                    fn(values)
                torch.cuda.synchronize()
                mark = self._lap(f"first_calls.{name}", mark)
        self._prepared[ctx.case] = (sets, contenders)
        # The timer's own buffers, while the process still may wait for the GPU lock: a
        # shortage is found before timing and charged to the evaluator, not the candidate.
        self._flush_l2()
        self.peak_bandwidth_gbps()
        self._lap("timer_buffers", mark)

    def time_case(self, ctx: TimingContext) -> CaseTiming:
        # Every call of every contender runs without autograd, as the call loop and the
        # first calls do. With it on, a reference whose parameters require grad made
        # torch.compile recompile under the GPU lock (its guards include the grad mode: 0.4 s
        # per case on an H100) and sampled a training-mode forward, which saves tensors for
        # a backward pass, against a candidate timed without it.
        with torch.no_grad():
            return self._time_case(ctx)

    def _time_case(self, ctx: TimingContext) -> CaseTiming:
        if ctx.case not in self._prepared:
            self.prepare(ctx)
        sets, contenders = self._prepared.pop(ctx.case)
        mark = time.perf_counter()
        for fn in contenders.values():  # warm again now that the GPU is ours: first-touch, clocks
            for values in sets:
                fn(values)
        torch.cuda.synchronize()
        mark = self._lap("warm", mark, "timing")
        issue_us = self._issue_us(contenders, sets[0])
        self._lead_us = self._lead_from(issue_us)
        overhead = self._sync_overhead_ms()
        names = [k for k in contenders if ctx.sampled is None or k in ctx.sampled]
        # The batch size and the stopping rule follow the candidate (the first contender when
        # a run samples the baselines alone, once for a whole job).
        lead = names[0]
        # Every contender's GPU time, roughly: what the call loop's length is set by.
        estimates = {k: statistics.median(self._steady_sample(fn, sets[0], 1.0)[0] for _ in range(5))
                     for k, fn in contenders.items() if k == lead or k not in names}
        estimate = estimates[lead]
        per_batch = int(min(MAX_PER_BATCH, max(MIN_PER_BATCH, BATCH_KERNEL_MS / max(estimate, 1e-3))))
        mark = self._lap("set_up", mark, "timing")  # issue time, lead, sync overhead, estimates
        samples: dict[str, list[float]] = {k: [] for k in names}
        host: dict[str, list[float]] = {k: [] for k in names}
        medians: dict[str, list[float]] = {k: [] for k in names}
        gaps: list[float] = []
        retakes: dict[str, int] = {k: 0 for k in names}
        started, rounds = time.monotonic(), 0
        while True:
            # Contenders alternate sample by sample (in a rotating order), so anything else that
            # slows the GPU for a while slows all three alike instead of one whole batch.
            batch: dict[str, list[float]] = {k: [] for k in names}
            for _ in range(per_batch):
                rounds += 1
                values = sets[rounds % INPUT_SETS]
                perturb = 1.0 + 1e-3 * ((rounds % 7) - 3)
                for k in range(len(names)):
                    name = names[(rounds + k) % len(names)]
                    gpu_ms, host_ms, after_ms, retaken = self._steady_sample(contenders[name], values, perturb)
                    retakes[name] += retaken
                    batch[name].append(gpu_ms)
                    host[name].append(host_ms)
                    if name == "candidate":
                        gaps.append(max(0.0, after_ms - overhead))
            for name in names:
                samples[name].extend(batch[name])
                medians[name].append(statistics.median(batch[name]))
            cv = _cv(medians[lead])
            batches = len(medians[lead])
            if batches >= MIN_BATCHES and (
                cv < TARGET_CV or batches >= MAX_BATCHES or time.monotonic() - started > self.max_case_s
            ):
                break
        mark = self._lap("samples", mark, "timing")
        peak = self.peak_bandwidth_gbps()
        floor_ms = ctx.bytes_moved / (peak * 1e9) * 1e3 if peak else 0.0
        # The samples give GPU time: the lead hides each contender's host-side issue cost alike.
        # On an evaluator host busy with other candidates' compiles that cost is inflated for
        # every contender (measured on the H100: 0.07-0.2 ms per call against 0.03-0.07 ms of
        # GPU work), so it is reported beside them (the 10th percentile of the call's host time:
        # load only adds to it) and charged only in the call loop, whose rounds interleave the
        # contenders so that load falls on all of them alike.
        issue_ms = {k: gputiming.percentile(host[k], 0.1) for k in names}
        gpu_ms = {k: statistics.median(samples[k]) for k in names}
        # A contender not sampled here (its job's run sampled it) counts with its quick
        # estimate and its issue time in the call loop's length.
        per_call = {k: max(gpu_ms[k], issue_ms[k]) if k in names else max(estimates[k], issue_us[k] / 1e3)
                    for k in contenders}
        # The loop compares the candidate with its baselines: a run of the baselines alone has none.
        loop_ms = self.call_loop(contenders, sets, max(per_call.values())) if "candidate" in contenders else {}
        self._lap("call_loop", mark, "timing")
        return CaseTiming(
            candidate_ms=gpu_ms.get("candidate", 0.0),
            eager_ms=gpu_ms.get("eager", 0.0),
            compile_ms=gpu_ms.get("compile", 0.0),
            candidate_loop_ms=loop_ms.get("candidate", 0.0),
            eager_loop_ms=loop_ms.get("eager", 0.0),
            compile_loop_ms=loop_ms.get("compile", 0.0),
            cv=cv,
            calls=len(samples[lead]),
            extra={
                "floor_ms": floor_ms,
                "peak_gbps": peak,
                "async_gap_ms": statistics.median(gaps) if gaps else 0.0,
                **{f"{k}_cv": _cv(medians[k]) for k in names if k != "candidate"},
                "batches": float(batches),
                "samples_per_batch": float(per_batch),
                "lead_us": self._lead_us,
                # 1: this process's torch.compile baseline was built before its request came
                "baselines_built_ahead": float(ctx.case in self._built_ahead),
                **{f"{k}_host_ms": issue_ms[k] for k in names},
                # retakes per sample because the host was slower than the lead (0 = quiet host)
                **{f"{k}_retake_rate": retakes[k] / max(1, len(samples[k])) for k in names},
            },
        )


def _compile(reference: torch.nn.Module) -> Callable[..., Any]:
    """torch.compile in default mode, specialised to the case's shape: its automatic dynamic
    shapes (and the profile it keeps in the compile cache, keyed by file and line) would
    otherwise turn a spec seen at two shapes into a slower dynamic-shape baseline for every
    later candidate."""
    return torch.compile(reference, dynamic=False)


def _perturb(values: Sequence[Any], factor: float) -> None:
    """New contents for an input set, in place (same storage): a cache keyed on contents misses."""
    with torch.no_grad():
        for t in values:
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                t.mul_(factor)


def _cv(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean > 0 else 0.0


def create(platform: Platform) -> CudaTimer:
    if not torch.cuda.is_available():
        raise RuntimeError(f"platform {platform.name!r} needs a CUDA GPU, and torch sees none")
    return CudaTimer(platform.name)
