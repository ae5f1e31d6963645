"""The mtia-sim pool's timing: estimates from kevolve's simulated accelerator, never measurements.

Correctness is the harness's (the candidate runs under the Triton interpreter on the CPU).
After it passes, :meth:`MtiaSim.time_case` runs the candidate once more while
:class:`kevolve.exec.interp_trace.InterpTrace` counts what its kernels do, and estimates the time
with the machine model of ``kb/<platform.machine_model>``. The baseline is the reference
``Model`` estimated the same way from its aten ops (each a separate launch and DRAM pass, as
the chip's eager operator library runs it). Results carry ``simulated=True``: fitness on this
pool is baseline estimate / candidate estimate and is never mixed with measured GPU times.

A kernel whose program instance cannot fit its tile in a PE's SRAM fails
(``runtime:sram_overflow``): on the real chip that kernel would not compile.
"""

from __future__ import annotations

import hashlib
import os
import platform as _pyplatform
from pathlib import Path

import torch
import triton

from kevolve.config import REPO_ROOT
from kevolve.exec.interp_trace import InterpTrace
from kevolve.exec.mtia_sim import Estimate, MachineModel, aten_counter, estimate, load_machine
from kevolve.platforms import Platform

from ..guards import GuardViolation
from .base import CaseTiming, Speed, TimingContext


class SimulationUnavailable(RuntimeError):
    """The candidate cannot be simulated here (no interpreter, no Triton launch)."""


def machine_path(platform: Platform) -> Path:
    """The harness passes an absolute path (resolved against the service's kb dir); a relative
    one (a direct caller) is resolved against KEVOLVE_KB_DIR or the repository's kb/."""
    if not platform.machine_model:
        raise SimulationUnavailable(f"platform {platform.name!r} has no machine_model in kb/platforms.toml")
    path = Path(platform.machine_model)
    if path.is_absolute():
        return path
    kb_dir = Path(os.environ.get("KEVOLVE_KB_DIR") or REPO_ROOT / "kb")
    return kb_dir / path


class MtiaSim:
    speed: Speed = "simulated"
    device = "cpu"

    def __init__(self, name: str, machine: MachineModel, source: Path) -> None:
        self.name = name
        self.machine = machine
        self.source = source
        self._digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]

    def environment(self) -> dict[str, str]:
        return {"device": f"{self.machine.name} (simulated: Triton interpreter + machine model)",
                "machine_model": str(self.source), "machine_model_sha256": self._digest,
                "torch": torch.__version__, "triton": triton.__version__,
                "python": _pyplatform.python_version()}

    def estimate_candidate(self, ctx: TimingContext) -> tuple[Estimate, InterpTrace]:
        if os.environ.get("TRITON_INTERPRET") != "1":
            raise SimulationUnavailable("mtia-sim needs TRITON_INTERPRET=1 in the candidate process")
        with InterpTrace() as trace:
            ctx.run_candidate(ctx.make_inputs(0))
        if not trace.launches:
            raise SimulationUnavailable("the candidate launched no Triton kernel under the interpreter; "
                                        "mtia-sim can only estimate Triton kernels")
        return estimate(self.machine, trace.launches), trace

    def estimate_baseline(self, ctx: TimingContext) -> Estimate:
        reference = ctx.make_reference()
        values = ctx.make_inputs(1)
        with torch.no_grad(), aten_counter() as counter:
            reference(*values)
        return estimate(self.machine, counter.to_launches(self.machine))

    def prepare(self, ctx: TimingContext) -> None:
        """Nothing to set up: estimates come from interpreter runs inside ``time_case``."""

    def time_case(self, ctx: TimingContext) -> CaseTiming:
        cand, trace = self.estimate_candidate(ctx)
        if cand.violations:
            raise GuardViolation("sram_overflow", cand.violations[0])
        base = self.estimate_baseline(ctx)
        if base.time_ms <= 0:
            raise SimulationUnavailable("the reference ran no aten op the model can estimate")
        util = cand.utilization()
        extra = {"sim_time_us": cand.time_us, "baseline_sim_time_us": base.time_us,
                 "launches": float(len(cand.launches)), "baseline_launches": float(len(base.launches)),
                 "sram_bytes_per_block": float(cand.sram_bytes_per_block),
                 "sram_limit_bytes": float(self.machine.sram_bytes),
                 "bytes_read": float(trace.bytes_loaded), "bytes_written": float(trace.bytes_stored),
                 **{k: float(v) for k, v in util.items()}}
        # The physical floor on this chip: the bytes the operator must move at peak DRAM
        # bandwidth (the harness flags estimates below it).
        if ctx.bytes_moved > 0:
            extra["floor_ms"] = ctx.bytes_moved / (self.machine.memory.dram_bandwidth_gbs * 1e9) * 1e3
        # The chip has no torch.compile: the eager operator library's estimate is the baseline
        # (compile_ms stays 0, "not measured"), so fitness = baseline estimate / candidate estimate.
        return CaseTiming(candidate_ms=cand.time_ms, eager_ms=base.time_ms, simulated=True, extra=extra,
                          calls=1)


def create(platform: Platform) -> MtiaSim:
    path = machine_path(platform)
    return MtiaSim(platform.name, load_machine(path), path)
