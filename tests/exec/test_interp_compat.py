"""Triton 3.6 interpreter fixes (kevolve.exec.interp_compat): scalars loaded from memory bound loops, and bfloat16 rounds as on the GPU."""

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


def test_float32_to_bfloat16_rounds_to_nearest_even_as_the_gpu_does() -> None:
    """The interpreter truncated the mantissa, so a correct bfloat16 kernel was off by one
    step (0.03 at 4-8) against PyTorch and failed its screening."""
    import os

    import torch
    import triton
    import triton.language as tl

    assert os.environ.get("TRITON_INTERPRET") == "1"
    interp_compat.apply()

    @triton.jit
    def round_trip(src, dst, n: tl.constexpr):
        offs = tl.arange(0, n)
        tl.store(dst + offs, tl.load(src + offs).to(tl.bfloat16).to(tl.float32))

    x = torch.randn(4096) * 8
    x[:6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 3.3895e38, 1.0 + 2**-8, 1.0 + 3 * 2**-8])
    out = torch.empty_like(x)
    round_trip[(1,)](x, out, n=4096)
    want = x.bfloat16().float()
    assert torch.equal(out[1:], want[1:]) and out[0].isnan()


@triton.jit
def _wrapping_products(x, out, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(x + i)
    tl.store(out + i, v * 65536 + 7)


def test_int32_arithmetic_wraps_as_on_the_gpu_without_overflow_checks() -> None:
    """The interpreter checked every 32-bit integer add, sub and mul for overflow, four
    interpreted operations more for each (most of a convolution's interpreted time); a GPU
    build does that only in debug mode and wraps."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        import pytest

        pytest.skip("runs under the interpreter")
    interp_compat.apply()
    from triton.runtime import interpreter

    assert interpreter.interpreter_builder.options.sanitize_overflow is False
    x = torch.tensor([1, 40000, -40000, 3], dtype=torch.int32)
    out = torch.empty(4, dtype=torch.int32)
    _wrapping_products[(1,)](x, out, BLOCK=4)
    want = ((x.to(torch.int64) * 65536 + 7 + 2**31) % 2**32 - 2**31).to(torch.int32)
    assert out.tolist() == want.tolist()
