"""A scalar loaded from memory bounds a loop: Triton 3.6's interpreter needs kevolve.exec.interp_compat for it."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from kevolve.exec import interp_compat


@triton.jit
def _segment_sum(values, offsets, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(offsets + pid)
    end = tl.load(offsets + pid + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(start, end, BLOCK):  # loop bounds are loaded scalars
        idx = row + tl.arange(0, BLOCK)
        acc += tl.load(values + idx, mask=idx < end, other=0.0)
    tl.store(out + pid, tl.sum(acc, axis=0))


def test_loop_over_loaded_bounds_runs_in_the_interpreter() -> None:
    interp_compat.apply()
    assert not interp_compat.apply()  # idempotent: a second call changes nothing
    values = torch.arange(10, dtype=torch.float32)
    offsets = torch.tensor([0, 3, 3, 10], dtype=torch.int64)
    out = torch.empty(3)
    _segment_sum[(3,)](values, offsets, out, BLOCK=4)
    assert out.tolist() == [3.0, 0.0, 42.0]
