"""Run by test_gpu.py in a fresh process (TRITON_INTERPRET=0): the CUDA timer on two known cases.

Prints one JSON line: a bandwidth-bound op timed by our timer and by triton.testing.do_bench,
and a forward that leaves work on a side stream (A3) with the gap the timer saw.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import torch
import torch._dynamo.utils
import triton.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from services.evaluator.sandboxed.platforms.base import TimingContext
from services.evaluator.sandboxed.platforms.cuda import CudaTimer


class Ref(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1.0


GRAD_MODES: list[bool] = []


class Scaled(torch.nn.Module):
    """A reference with a parameter that requires grad, as a spec's Model has: it records the
    grad mode of every eager call."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(4096))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            GRAD_MODES.append(torch.is_grad_enabled())
        return x * self.scale


def main() -> None:
    x = torch.randn(8192, 4096, device="cuda")
    ctx = TimingContext(
        case="copy",
        sizes={},
        device="cuda",
        forward=lambda v: v[0] * 2.0,
        run_candidate=lambda v: v[0] * 2.0,
        make_inputs=lambda i: [torch.randn(8192, 4096, device="cuda")],
        make_reference=lambda: Ref().cuda(),
        bytes_moved=2 * x.numel() * 4,
    )
    plain = CudaTimer("cuda", max_case_s=10).time_case(ctx)
    do_bench = statistics.median(
        triton.testing.do_bench(lambda: x * 2.0, return_mode="median") for _ in range(3)
    )

    side = torch.cuda.Stream()
    big = torch.randn(4096, 4096, device="cuda")

    def side_forward(values: list[torch.Tensor]) -> torch.Tensor:
        out = torch.empty_like(values[0])
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(20):
                big.mul_(1.0000001)
        return out

    # Contenders run without autograd in every phase, and torch.compile compiles once.
    ctx.make_reference = lambda: Scaled().cuda()
    frames_before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    CudaTimer("cuda", max_case_s=5).time_case(ctx)
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"] - frames_before

    ctx.make_reference = lambda: Ref().cuda()
    ctx.forward = ctx.run_candidate = side_forward
    ctx.make_inputs = lambda i: [torch.randn(1024, 1024, device="cuda")]
    hidden = CudaTimer("cuda", max_case_s=5).time_case(ctx)
    print(
        json.dumps(
            {
                "plain_ms": plain.candidate_ms,
                "plain_cv": plain.cv,
                "do_bench_ms": do_bench,
                "floor_ms": plain.extra["floor_ms"],
                "side_ms": hidden.candidate_ms,
                "side_gap_ms": hidden.extra["async_gap_ms"],
                "grad_modes": sorted(set(GRAD_MODES)),
                "compiled_graphs": graphs,
            }
        )
    )


if __name__ == "__main__":
    main()
