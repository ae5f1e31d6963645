"""The cpu pool: Triton's interpreter, correctness only.

Interpreter wall time says nothing about GPU speed, so no time is reported. The "timing
loop" still runs the candidate a few times on fresh inputs, so the harness's re-check after
it (a kernel that behaves after N calls) exists on the cpu pool too.
"""

from __future__ import annotations

import platform as _pyplatform

import torch
import triton

from kevolve.platforms import Platform

from .base import CaseTiming, Speed, TimingContext

CALLS = 3


class CpuInterpreter:
    speed: Speed = "none"
    device = "cpu"

    def __init__(self, name: str) -> None:
        self.name = name

    def environment(self) -> dict[str, str]:
        return {
            "device": "cpu (Triton interpreter)",
            "cpu": _pyplatform.processor() or _pyplatform.machine(),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "python": _pyplatform.python_version(),
        }

    def prepare(self, ctx: TimingContext) -> None:
        """Nothing to compile or warm: the interpreter runs the kernels as they are."""

    def time_case(self, ctx: TimingContext) -> CaseTiming:
        if "candidate" in ctx.contenders:
            for i in range(CALLS):
                ctx.run_candidate(ctx.make_inputs(i))
        else:  # a job's baselines: the reference runs as a measuring pool's would, unmeasured
            reference = ctx.make_reference()
            with torch.no_grad():
                for i in range(CALLS):
                    reference(*ctx.make_inputs(i))
        return CaseTiming(calls=CALLS)


def create(platform: Platform) -> CpuInterpreter:
    return CpuInterpreter(platform.name)
