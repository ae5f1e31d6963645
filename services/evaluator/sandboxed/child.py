"""The code that runs inside sandboxed children: ``python -m services.evaluator.sandboxed.child MODE PLAN``.

``reference`` mode runs the spec's Model on every trial's inputs and saves inputs, outputs and
the Model's weights to the scratch directory. ``candidate`` mode (a different process, which
never sees reference outputs) loads those inputs, runs ModelNew under the runtime guards and
saves its outputs; the trusted worker compares. The candidate child works in two phases:
correctness trials, then (after the worker confirms they matched, through a ``go`` file)
timing and a re-check on inputs it has not seen. ``baselines`` mode (a GPU pool, once per
job plan) loads the spec alone and samples its eager and torch.compile GPU times, under the
same go handshake.

Each mode writes ``<mode>.result.json`` (``protocol.ReferenceResult`` / ``CandidateResult`` /
``BaselineResult``: a status and, on failure, the verdict and the check that decided it). Exceptions become
classified verdicts; nothing here trusts the candidate.
"""

from __future__ import annotations

import os
import re
import resource
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import torch

from kevolve.exec import interp_compat
from kevolve.exec.childstatus import ChildFailure, ChildStatus
from kevolve.reports import CaseTiming, KernelLaunches
from kevolve.specfile import load_module, outline

from ..protocol import (CANDIDATE_FILE, GO, PART_SUFFIX, PHASE1_MARKER, REF_META_FILE, SPEC_FILE,
                        STOP, TIMED_MARKER, TRIALS_MARKER,
                        BaselineResult, CandidateResult, EvalPlan, OutputShape, PlanCase, ReferenceCase, ReferenceResult,
                        result_file)
from . import ahead, inputs
from .platforms.base import TimerInfraError, TimingContext

# The worker may hold the go back while other candidates are timed on this GPU; the sandbox
# timeout (extended by that wait) is the real limit.
GO_WAIT_S = 3600.0
T = TypeVar("T")
# Set by a zygote's spare (a child forked ahead of its request) when its request arrives
# (time.monotonic()): its run starts then, not when the process did.
STARTED_AT: float | None = None


def _tensors(values: list[Any]) -> list[torch.Tensor]:
    return [v for v in values if isinstance(v, torch.Tensor)]


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _nbytes(values: list[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(values))


# -- reference ------------------------------------------------------------------------------
def _declared(spec: Any, helper: str) -> float:
    """What the spec's optional ``bytes_moved()`` / ``flops()`` helper says for this case (0 if none)."""
    fn = getattr(spec, helper, None)
    if not callable(fn):
        return 0.0
    try:
        value = float(fn())
    except Exception:  # noqa: BLE001 - a helper that fails declares nothing
        return 0.0
    return value if value > 0 else 0.0


class TooLarge(Exception):
    """A reference set that the sandbox would not let this process write as one file."""


def _fits_one_file(values: list[Any], what: str) -> None:
    """Raise TooLarge, naming ``what`` and the setting, when saving ``values`` would pass the
    process's file-size limit (else the write stops there, with a serializer's "unexpected pos")."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    size = _nbytes(values)
    if limit != resource.RLIM_INFINITY and size + 2**20 > limit:  # a MiB for the archive's own records
        raise TooLarge(f"{what} weigh {size / 2**30:.2f} GiB, more than the {limit / 2**30:.2f} GiB the "
                       "evaluator lets a run write in one file (KEVOLVE_EVALUATOR_MAX_FILE_MB); "
                       "smaller sizes in the spec, or a larger setting, would run")


def run_reference(plan: EvalPlan, work: Path) -> ReferenceResult:
    device = plan.device
    source = (work / SPEC_FILE).read_text()
    cases: dict[str, ReferenceCase] = {}
    for case in plan.cases:
        spec = load_module(source, f"kv_spec_{case.index}", case.sizes, str(work / SPEC_FILE))
        torch.manual_seed(case.state_seed)
        model = spec.Model(*spec.get_init_inputs()).to(device).eval()
        case_dir = work / "ref" / str(case.index)
        case_dir.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, case_dir / "state.pt")
        notes: list[str] = []
        meta = ReferenceCase()
        for kind in ("trials", "recheck"):
            for i, trial in enumerate(case.draws(kind)):
                variant = trial.variant
                # Drawn on the device: the saved inputs are what the candidate is run on, so
                # whatever values the device's generator gives, both sides see the same ones.
                values = inputs.make_inputs(spec, trial.seed, variant, device, on_device=True)
                why_raw = ""  # set when the variant left the spec's input domain
                try:
                    with torch.no_grad():
                        outs = _as_list(model(*values))
                    if variant != "raw" and any(o.is_floating_point() and not torch.isfinite(o).all() for o in outs):
                        why_raw = "gave non-finite output"
                except Exception as exc:  # noqa: BLE001 - only a variant's failure is forgiven
                    if variant == "raw":
                        raise  # the spec fails on the data it generates itself: its own error
                    why_raw = f"made the reference raise {type(exc).__name__}: {exc}"[:300]
                if why_raw:
                    # The variant left the spec's input domain (log of a negative, a cross-entropy
                    # target outside [0, 1] that torch rejects...): use the raw data instead.
                    notes.append(f"{kind}[{i}]: {variant} inputs {why_raw}; used raw inputs")
                    values = inputs.make_inputs(spec, trial.seed, "raw", device, on_device=True)
                    with torch.no_grad():
                        outs = _as_list(model(*values))
                why = inputs.degenerate(outs)
                if why:
                    notes.append(f"{kind}[{i}]: degenerate reference ({why})")
                # Inputs and expected outputs in separate files: only inputs reach the candidate.
                _fits_one_file(values, f"the inputs of {case.name} {kind}[{i}]")
                _fits_one_file(outs, f"the outputs of {case.name} {kind}[{i}]")
                torch.save(
                    [v.cpu() if isinstance(v, torch.Tensor) else v for v in values],
                    case_dir / f"inputs_{kind}{i}.pt",
                )
                torch.save([o.detach().cpu() for o in outs], case_dir / f"expected_{kind}{i}.pt")
                meta = ReferenceCase(
                    bytes_moved=_nbytes(values) + _nbytes(outs),
                    outputs=[OutputShape(shape=list(o.shape), dtype=str(o.dtype)) for o in outs],
                )
        cases[str(case.index)] = meta.model_copy(update={
            "notes": notes, "declared_bytes": _declared(spec, "bytes_moved"),
            "declared_flops": _declared(spec, "flops")})
    return ReferenceResult(cases=cases)


# -- timing contexts ------------------------------------------------------------------------
def _timing_inputs(spec: Any, case: PlanCase, device: str) -> Callable[[int], list[Any]]:
    def make_inputs(i: int) -> list[Any]:
        # Timing inputs are compared with nothing: drawn on the device, which is fast.
        return inputs.make_inputs(spec, case.timing_seed + i, inputs.VARIANTS[i % 5], device, on_device=True)

    return make_inputs


# -- candidate ------------------------------------------------------------------------------
class Failure(Exception):
    def __init__(self, verdict: str, decided_by: str, reason: str, tb: str = "") -> None:
        super().__init__(reason)
        self.verdict, self.decided_by, self.reason, self.tb = verdict, decided_by, reason, tb

    def as_failure(self) -> ChildFailure:
        return ChildFailure(verdict=self.verdict, decided_by=self.decided_by, reason=self.reason, traceback=self.tb)


def _classify(exc: BaseException) -> Failure:
    from . import guards

    tb = traceback.format_exc()[-8000:]
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    text = f"{name}: {exc}"[:2000]
    if isinstance(exc, guards.GuardViolation):
        return Failure("REJECTED_RUNTIME", f"runtime:{exc.rule}", exc.reason, tb)
    if isinstance(exc, TimerInfraError):  # the timer's own resources ran out: the controller retries
        return Failure("INFRA_ERROR", "infra:timer", text, tb)
    if isinstance(exc, ScratchFull):  # a full scratch disk: retried, never the candidate's failure
        return Failure("INFRA_ERROR", "infra:disk", str(exc), tb)
    if (isinstance(exc, MemoryError) or "out of memory" in text.lower() or "can't allocate memory" in text
            or any(sign in text for sign in _LIBRARY_ALLOC)):
        if _gpu_held_by_others(exc):  # not this process's doing: the controller tries it again
            return Failure("INFRA_ERROR", "infra:gpu_memory",
                           f"the GPU's memory was held by other processes of this pool: {text}", tb)
        return Failure("OUT_OF_MEMORY", "sandbox:memory", text, tb)
    if isinstance(exc, SystemExit):
        return Failure("CRASHED", "runtime:exit", f"the candidate called exit ({exc.code})", tb)
    if module.startswith("triton") and ("Compil" in name or "Interpreter" in name):
        return Failure("COMPILE_ERROR", "runtime:triton_compile", text, tb)
    return Failure("RUNTIME_ERROR", "runtime:exception", f"{text}{_where(exc)}", tb)


_ASKED = re.compile(r"Tried to allocate ([0-9.]+) (GiB|MiB|KiB|B)\b")
_UNIT = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "B": 1}
# A GPU pool runs several candidates (and their spares) on one GPU: a process that held less
# than this share of its memory, counting what it asked for, ran out because others held the
# rest (measured: a 1.5 GiB request failed with 1 GiB free of 79 while twelve candidates of
# eight jobs shared an H100).
OWN_GPU_SHARE = 0.5


# A library's or the driver's failure to allocate, with no size said: a cuBLAS or cuDNN handle
# or workspace, a context (a cuBLAS handle the reference's forward created, while the GPU was
# full of other candidates, was charged to a candidate as its RUNTIME_ERROR).
_LIBRARY_ALLOC = ("CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED", "CUDA error: out of memory")


def _gpu_held_by_others(exc: BaseException) -> bool:
    """A CUDA out-of-memory error in a process whose own peak, with the failed request (a
    library's small allocation when it names none), stayed under ``OWN_GPU_SHARE`` of the GPU:
    the evaluator's failure, not the candidate's."""
    text = str(exc)
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        asked = _ASKED.search(text)
        if asked is None:
            return False
        request = float(asked.group(1)) * _UNIT[asked.group(2)]
    elif any(sign in text for sign in _LIBRARY_ALLOC):
        request = 0.0
    else:
        return False
    try:
        device = torch.cuda.current_device()
        own = max(torch.cuda.memory_reserved(device), torch.cuda.max_memory_reserved(device))
        total = torch.cuda.get_device_properties(device).total_memory
    except (RuntimeError, AssertionError):  # no CUDA here: the message came from elsewhere
        return False
    return own + request < OWN_GPU_SHARE * total


def _where(exc: BaseException) -> str:
    """" (raised in FILE:LINE, FUNC)" for the innermost frame: the reason alone rarely says which
    call failed (an OSError from a C call names no file). Library frames are named from their
    package down, so no host path reaches the report."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    frame = traceback.extract_tb(tb)[-1]
    parts = Path(frame.filename).parts
    for anchor in ("site-packages", "dist-packages"):
        if anchor in parts:
            parts = parts[parts.index(anchor) + 1:]
            break
    else:
        parts = parts[-1:]
    return f" (raised in {'/'.join(parts)}:{frame.lineno}, {frame.name})"


def _timing_step(step: Callable[[], T], doing: str) -> T:
    """Run a platform's prepare/time_case; an exception becomes a ``timing:`` verdict naming the step."""
    try:
        return step()
    except Failure:
        raise
    except BaseException as exc:
        failure = _classify(exc)
        raise Failure(
            failure.verdict,
            failure.decided_by.replace("runtime:exception", "timing:error"),
            f"{doing}: {failure.reason}",
            failure.tb,
        ) from exc


class Stopped(Exception):
    """The worker said STOP: the run ends without a verdict of its own."""


def _wait_for(work: Path, marker: str = GO) -> bool:
    """True once the worker writes ``marker``; False on its STOP (or after GO_WAIT_S)."""
    deadline = time.monotonic() + GO_WAIT_S
    while time.monotonic() < deadline:
        for name, answer in ((marker, True), (STOP, False)):
            if (work / name).exists():
                return answer
        time.sleep(0.005)
    return False


class ScratchFull(OSError):
    """This process could not write its own outputs file: the scratch disk (shared with the
    pool's other runs) is full, which is no candidate's doing."""


# How a write that ran out of room surfaces from torch.save's zip writer (or from the OS).
_WRITE_FAILED = ("iostream error", "unexpected pos", "No space left", "File too large", "Disk quota")


def _save(values: list[Any], path: Path) -> None:
    """Saved whole under a temporary name, then renamed into place: the worker compares a file
    the moment it appears."""
    part = path.with_name(path.name + PART_SUFFIX)
    try:
        torch.save(values, part)
    except (OSError, RuntimeError) as exc:
        part.unlink(missing_ok=True)
        if any(sign in str(exc) for sign in _WRITE_FAILED):
            raise ScratchFull(f"the outputs file {path.name} could not be written ({exc}): the "
                              "evaluator's scratch disk is full; try again when other runs have ended") from exc
        raise
    os.replace(part, path)


def _no_checksums() -> None:
    """Files this process saves carry no CRC-32 (a third of the time of saving a 64 MB output
    on a host core): nothing reads them but the worker, on the same machine, and a checksum
    the candidate could recompute guards nothing against it."""
    try:
        from torch.utils.serialization import config

        config.save.compute_crc32 = False
    except (ImportError, AttributeError):  # an older torch: saved with checksums
        pass


def _process_age_s() -> float:
    """Seconds since this process started, from the kernel's start time in clock ticks since
    boot. ``psutil``'s create_time adds the boot time, which the kernel states in whole
    seconds: up to a second off, and a different second on every host."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        import psutil

        return max(0.0, time.time() - psutil.Process().create_time())


class CandidateRun:
    def __init__(self, plan: EvalPlan, work: Path) -> None:
        # Imported here: the reference child needs neither Triton nor the guards.
        from . import guards
        from .platforms import create_timing_platform

        self.guards = guards
        self.plan = plan
        self.work = work
        self.device = plan.device
        self.machine_model = plan.machine_model_in(work)
        # What baselines built ahead of this process's request must have been built from.
        self.spec_digest = ahead.spec_digest((work / SPEC_FILE).read_bytes())
        self.platform = create_timing_platform(plan.platform.resolved(self.machine_model))
        self.originals = guards.guarded_functions()
        self.recorder = guards.LaunchRecorder()
        self.kernels: dict[str, KernelLaunches] = {}
        self.models: dict[int, tuple[Any, Any]] = {}
        self.contexts: dict[int, TimingContext] = {}
        # Where the trial and re-check sets' time went (inputs, calls, saving the outputs).
        self.phases_s: dict[str, float] = {}
        self.called = False
        # Page-locked host buffers for trial outputs, by (output index, shape, dtype).
        self._host_buffers: dict[tuple[int, tuple[int, ...], torch.dtype], torch.Tensor] = {}
        if self.device == "cuda":
            # Triton's driver starts once per process, running helper programs (``file`` via
            # platform.architecture, ``ldconfig``, a C compiler): started here, before the
            # guard is armed, so no candidate is charged with them.
            import triton

            triton.runtime.driver.active.get_current_device()
        # Armed from here on: the candidate's import, construction, forward calls and timing.
        self.process_guard = guards.ProcessGuard()
        self.process_guard.armed = True

    def _load(self, case: PlanCase) -> tuple[Any, Any]:
        spec_src = (self.work / SPEC_FILE).read_text()
        spec = load_module(spec_src, f"kv_spec_{case.index}", case.sizes, str(self.work / SPEC_FILE))
        cand_path = self.work / CANDIDATE_FILE
        cand_src = cand_path.read_text()
        own = outline(cand_src).sizes
        sizes = {k: v for k, v in case.sizes.items() if k in own}
        try:
            cand = load_module(cand_src, f"kv_candidate_{case.index}", sizes, str(cand_path))
        except SyntaxError as exc:
            raise Failure("COMPILE_ERROR", "load:syntax", f"candidate does not parse: {exc}") from exc
        except BaseException as exc:
            failure = _classify(exc)
            if failure.verdict == "RUNTIME_ERROR":
                failure = Failure(
                    "COMPILE_ERROR",
                    "load:candidate",
                    f"importing the candidate failed: {failure.reason}",
                    failure.tb,
                )
            raise failure from exc
        if not isinstance(getattr(cand, "ModelNew", None), type):
            raise Failure("COMPILE_ERROR", "load:no_model_new", "the candidate defines no class ModelNew")
        try:
            init = spec.get_init_inputs()
            torch.manual_seed(case.state_seed)
            model = cand.ModelNew(*init)
            state = torch.load(self.work / "in" / str(case.index) / "state.pt", weights_only=True)
            mine = model.state_dict()
            matching = {k: v for k, v in state.items() if k in mine and mine[k].shape == v.shape}
            model.load_state_dict(matching, strict=False)
            model = model.to(self.device).eval()
            self.process_guard.check()
        except BaseException as exc:
            failure = _classify(exc)
            raise Failure(
                failure.verdict if failure.verdict != "RUNTIME_ERROR" else "RUNTIME_ERROR",
                "load:model_new" if failure.decided_by == "runtime:exception" else failure.decided_by,
                f"building ModelNew failed: {failure.reason}",
                failure.tb,
            ) from exc
        return spec, model

    def _call(self, model: Any, values: list[Any], reuse_host: bool = False) -> list[torch.Tensor]:
        """One guarded forward: the outputs as plain CPU tensors, or a Failure.

        ``reuse_host``: GPU outputs are copied into page-locked host buffers kept for the next
        call of the same output shape (the caller is done with them by then). A copy into
        fresh pageable memory ran at about 1 GB/s on an H100 host (60 ms per 64 MB output,
        0.86 s of every evaluation); a page-locked one streams at the bus's rate."""
        mark = time.monotonic()
        tensors = _tensors(values)
        pristine = [t.clone() for t in tensors]
        if self.device == "cuda":
            # Poison the caching allocator: memory torch.empty hands out next is NaN, not a
            # stale copy of something correct.
            torch.empty(max(1, sum(t.numel() for t in tensors)) * 2, device="cuda").fill_(float("nan"))
            torch.cuda.synchronize()
        mark = self._part("pristine_and_poison", mark)
        try:
            with self.guards.observe_forward(self.recorder):
                out = model(*values)
                if self.device == "cuda":
                    torch.cuda.synchronize()
            mark = self._part("forward", mark)
            outs = self.guards.flatten_outputs(out)
            self.guards.check_aliasing(outs, tensors)
            self.guards.check_identity(self.originals)
            self.process_guard.check()
        except BaseException as exc:
            raise _classify(exc) from exc
        for i, (before, after) in enumerate(zip(pristine, tensors, strict=True)):
            if not torch.equal(before, after) and not (
                before.isnan().any() and torch.allclose(before, after, equal_nan=True)
            ):
                raise Failure("REJECTED_RUNTIME", "trial:input_mutation", f"forward modified input {i}")
        for i, o in enumerate(outs):
            if o.device.type != torch.device(self.device).type:
                raise Failure(
                    "INCORRECT", "trial:device", f"output {i} is on {o.device}, expected {self.device}"
                )
        mark = self._part("checks", mark)
        copied = [self._to_host(i, o.detach()) if reuse_host else o.detach().cpu() for i, o in enumerate(outs)]
        self._part("copy_out", mark)
        return copied

    def _to_host(self, index: int, out: torch.Tensor) -> torch.Tensor:
        if out.device.type != "cuda":
            return out.cpu()
        key = (index, tuple(out.shape), out.dtype)
        buffer = self._host_buffers.get(key)
        if buffer is None:
            try:
                buffer = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)
            except RuntimeError:  # too large to lock: an ordinary copy
                return out.cpu()
            self._host_buffers[key] = buffer
        return buffer.copy_(out)

    def _part(self, name: str, since: float) -> float:
        """Where a guarded call's time goes, summed over every trial and re-check call."""
        return self._add_time(f"guarded_call.{name}", since)

    def _run_set(self, case: PlanCase, model: Any, kind: Literal["trials", "recheck"]) -> None:
        out_dir = self.work / "out" / str(case.index)
        out_dir.mkdir(parents=True, exist_ok=True)
        for i in range(len(case.draws(kind))):
            mark = time.monotonic()
            # The worker is copying the inputs in while this process runs: each file is there
            # once renamed into place (or the worker said STOP).
            name = f"in/{case.index}/inputs_{kind}{i}.pt"
            if not (self.work / name).exists():
                if not _wait_for(self.work, name):
                    raise Stopped()
                mark = self._account(kind, "wait_for_inputs", mark)
            # Memory-mapped where a copy to the device follows: the file is read once, by it
            # (on the cpu pool the loaded tensors are the inputs themselves: read into memory).
            saved = torch.load(self.work / name, weights_only=True, mmap=self.device != "cpu")
            values = [v.to(self.device) if isinstance(v, torch.Tensor) else v for v in saved]
            self._account(kind, "inputs", mark)
            mark = time.monotonic()
            outs = self._call(model, values, reuse_host=True)  # saved below, before the next call
            # The first call of a process compiles its kernels (Triton JIT): counted apart.
            self._account(kind, "calls" if self.called else "first_call", mark)
            self.called = True
            for launch in self.recorder.launches:
                entry = self.kernels.setdefault(launch.name, KernelLaunches(name=launch.name, grid=list(launch.grid)))
                entry.launches += 1
            mark = time.monotonic()
            _save(outs, out_dir / f"{kind}{i}.pt")
            self._account(kind, "save", mark)
        # Back to torch's page-locked cache, where the next set's buffers come from.
        self._host_buffers.clear()

    def _account(self, kind: str, what: str, since: float) -> float:
        return self._add_time(f"{'correctness_trials' if kind == 'trials' else 'recheck'}.{what}", since)

    def _add_time(self, key: str, since: float) -> float:
        """Seconds since ``since`` added to phase ``key``; returns now, the next step's start."""
        now = time.monotonic()
        self.phases_s[key] = round(self.phases_s.get(key, 0.0) + now - since, 3)
        return now

    def correctness(self) -> None:
        for case in self.plan.cases:
            mark = time.monotonic()
            # The first load also starts the device (a CUDA context) while the inputs arrive.
            self.models[case.index] = self._load(case)
            self._account("trials", "load", mark)
            self._run_set(case, self.models[case.index][1], "trials")

    def prepare_timing(self, ref_meta: dict[str, ReferenceCase]) -> None:
        """Build every case's timing context and let the platform do its untimed set-up (compiles).

        Runs before the worker has compared the trials, so it may overlap another candidate's
        timing on the same GPU; only ``time_case`` runs with the GPU to itself."""
        for case in self.plan.cases:
            ctx = self._timing_context(case, ref_meta)
            _timing_step(lambda: self.platform.prepare(ctx), "while preparing to time")
            self.contexts[case.index] = ctx
        if self.device == "cuda":
            # Blocks the trials freed stay cached by this process while it queues for the GPU
            # lock; with a dozen candidates prepared side by side that starved the GPU's memory.
            torch.cuda.empty_cache()

    def _timing_context(self, case: PlanCase, ref_meta: dict[str, ReferenceCase]) -> TimingContext:
        spec, model = self.models[case.index]
        launches = list(self.recorder.launches)

        def run_candidate(values: Any) -> Any:
            return self._call(model, list(values))

        def forward(values: Any) -> Any:
            with torch.no_grad():
                return model(*values)

        return TimingContext(
            case=case.name,
            sizes=case.sizes,
            device=self.device,
            forward=forward,
            run_candidate=run_candidate,
            machine_model=self.machine_model,
            make_inputs=_timing_inputs(spec, case, self.device),
            make_reference=ahead.reference_model(spec, case, self.work, self.device, self.spec_digest,
                                                 self.plan.allow_tf32),
            bytes_moved=float(ref_meta[str(case.index)].bytes_moved if str(case.index) in ref_meta else 0),
            launches=launches,
            # Its job's run sampled the baselines: the candidate samples itself alone (the call
            # loop still interleaves all three, under this moment's host load).
            sampled=None if self.plan.time_baselines else ("candidate",),
        )

    def timing(self) -> dict[str, CaseTiming]:
        timings: dict[str, CaseTiming] = {}
        for case in self.plan.cases:
            ctx = self.contexts[case.index]
            timings[str(case.index)] = _timing_step(lambda: self.platform.time_case(ctx), "while timing")
        return timings

    def recheck(self) -> None:
        """Every case again on inputs the candidate has not seen, after all its timing calls."""
        for case in self.plan.cases:
            self._run_set(case, self.models[case.index][1], "recheck")


def _failed(f: Failure, run: CandidateRun) -> CandidateResult:
    return CandidateResult(status="fail", failure=f.as_failure(), kernels=list(run.kernels.values()))


def run_candidate(plan: EvalPlan, work: Path) -> CandidateResult:
    # Wall time per step as this process saw it (reported; the worker cannot see inside).
    age = time.monotonic() - STARTED_AT if STARTED_AT is not None else _process_age_s()
    phases = {"start_and_import": round(age, 3)}
    mark = time.monotonic()

    def lap(name: str) -> None:
        nonlocal mark
        phases[name] = round(time.monotonic() - mark, 3)
        mark = time.monotonic()

    run = CandidateRun(plan, work)
    lap("set_up")
    try:
        run.correctness()
        lap("correctness_trials")
        # The outputs are saved: the worker compares them while the timing is prepared.
        ChildStatus().write(work / TRIALS_MARKER)
        run.prepare_timing(ReferenceResult.model_validate_json((work / REF_META_FILE).read_text()).cases)
        lap("prepare_timing")
        phases.update(getattr(run.platform, "phases_s", {}))  # a timer's own account of that step
    except Failure as f:
        return _failed(f, run)
    except Stopped:
        return CandidateResult(status="stopped", kernels=list(run.kernels.values()))
    ChildStatus().write(work / PHASE1_MARKER)
    if not _wait_for(work):
        return CandidateResult(status="stopped", kernels=list(run.kernels.values()))
    lap("wait_for_go")
    try:
        timings = run.timing()
        lap("timing")
        # The GPU is no longer needed alone: the worker releases its lock on this marker, so
        # the next candidate's timing overlaps this re-check and the worker's comparison.
        ChildStatus().write(work / TIMED_MARKER)
        run.recheck()
    except Failure as f:
        return _failed(f, run)
    except Stopped:
        return CandidateResult(status="stopped", kernels=list(run.kernels.values()))
    lap("recheck")
    phases.update(run.phases_s)
    phases.update(getattr(run.platform, "phases_s", {}))  # now with the timing's own account
    return CandidateResult(timings=timings, kernels=list(run.kernels.values()),
                           environment=run.platform.environment(), phases_s=phases)


# -- a job's baselines ----------------------------------------------------------------------
def run_baselines(plan: EvalPlan, work: Path) -> BaselineResult:
    """Eager PyTorch's and torch.compile's GPU times sampled for every case, once for a job, by
    a process that loads the spec and nothing else: the job's full-stage candidates then sample
    their own GPU time alone (their call loop still runs all three), and no candidate's code
    runs beside the numbers it is compared with. Same timer, same method and the same GPU lock
    handshake as a candidate (prepare, ``PHASE1_MARKER``, wait for GO, time); no call loop."""
    from .platforms import create_timing_platform

    platform = create_timing_platform(plan.platform.resolved(plan.machine_model_in(work)))
    ref_meta = ReferenceResult.model_validate_json((work / REF_META_FILE).read_text()).cases
    raw = (work / SPEC_FILE).read_bytes()
    source, digest = raw.decode(), ahead.spec_digest(raw)
    contexts: dict[str, TimingContext] = {}

    def no_candidate(values: Any) -> Any:
        raise RuntimeError("a baselines run has no candidate")

    for case in plan.cases:
        spec = load_module(source, f"kv_spec_{case.index}", case.sizes, str(work / SPEC_FILE))
        ctx = TimingContext(
            case=case.name, sizes=case.sizes, device=plan.device, forward=no_candidate, run_candidate=no_candidate,
            make_inputs=_timing_inputs(spec, case, plan.device),
            make_reference=ahead.reference_model(spec, case, work, plan.device, digest, plan.allow_tf32),
            bytes_moved=float(ref_meta[str(case.index)].bytes_moved if str(case.index) in ref_meta else 0),
            contenders=("eager", "compile"),
        )
        platform.prepare(ctx)
        contexts[str(case.index)] = ctx
    if plan.device == "cuda":
        torch.cuda.empty_cache()
    ChildStatus().write(work / PHASE1_MARKER)
    if not _wait_for(work):
        return BaselineResult(status="stopped")
    timings = {index: platform.time_case(ctx) for index, ctx in contexts.items()}
    ChildStatus().write(work / TIMED_MARKER)
    return BaselineResult(timings=timings)


def build_ahead(plan_path: Path, source: bytes) -> None:
    """In a GPU pool's spare, before its request: every case's baselines from the plan of the
    request before it (``source``: its spec, as the spare read it), built, compiled and called
    once, and kept for a request of the same spec (``ahead.py``). Their inputs are freed."""
    from .platforms import create_timing_platform

    work = plan_path.parent
    plan = EvalPlan.load(plan_path)
    if plan.device != "cuda":
        return
    float32_precision(plan.allow_tf32)
    platform = create_timing_platform(plan.platform.resolved(plan.machine_model_in(work)))
    build = getattr(platform, "build_ahead", None)
    if build is None:
        return
    digest, text = ahead.spec_digest(source), source.decode()
    for case in plan.cases:
        spec = load_module(text, f"kv_spec_{case.index}", case.sizes, str(work / SPEC_FILE))
        reference = build(_timing_inputs(spec, case, plan.device), ahead.reference_model(spec, case, work, plan.device))
        ahead.keep(digest, case, plan.allow_tf32, reference)
    torch.cuda.empty_cache()


def float32_precision(tf32: bool) -> None:
    """float32 products in full precision for the reference, the baselines and any torch op a
    candidate calls: PyTorch runs cuDNN convolutions in TF32 by default, whose ~1e-3 error
    would make a correct float32 kernel fail the float32 tolerance, and would time the
    baselines at a precision the candidate is not allowed. A job that allows TF32 gets it for
    the baselines too (``tf32``), so a TF32 kernel races TF32 baselines."""
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def run_mode(mode: str, plan_path: Path) -> None:
    """Run one child job and write ``<mode>.result.json`` next to the plan."""
    work = plan_path.parent
    plan = EvalPlan.load(plan_path)
    torch.set_num_threads(1)
    _no_checksums()
    float32_precision(plan.allow_tf32 and mode in ("candidate", "baselines"))
    runs: dict[str, Callable[[EvalPlan, Path], ChildStatus]] = {
        "reference": run_reference, "candidate": run_candidate, "baselines": run_baselines}
    result: ChildStatus
    try:
        result = runs[mode](plan, work)
    except BaseException as exc:  # noqa: BLE001 - report, do not die silently
        result = ChildStatus(status="fail", failure=_classify(exc).as_failure())
    result.write(work / result_file(mode))
    sys.stdout.flush()
    sys.stderr.flush()


def main() -> None:
    interp_compat.apply()
    run_mode(sys.argv[1], Path(sys.argv[2]))
    # Skip interpreter teardown: a candidate's atexit/finalizers must not run after the verdict.
    os._exit(0)


if __name__ == "__main__":
    main()
