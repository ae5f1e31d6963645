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
import triton.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from services.evaluator.sandboxed.platforms.base import TimingContext
from services.evaluator.sandboxed.platforms.cuda import CudaTimer


class Ref(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1.0


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
            }
        )
    )


if __name__ == "__main__":
    main()
