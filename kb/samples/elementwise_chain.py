"""Fused elementwise chain: out = gelu(x) * scale + y in one pass over memory.

Memory-traffic reasoning: eager PyTorch runs three kernels (gelu, mul, add) and moves
~5 tensors' worth of bytes (read x, write t1, read t1, write t2, read t2 + y, write out).
The fused kernel reads x and y once and writes out once: 3 tensors' worth, so for a
memory-bound chain it approaches the DRAM bandwidth bound (on an H100, ~3.35 TB/s: 8192x4096
fp32 -> 403 MB moved -> ~120 us). All math runs in fp32 registers; the store casts to
the output dtype, so fp16/bf16 inputs keep fp32 accuracy inside the chain.

Tuning: BLOCK elements per program (1024-4096) with 4-8 warps keeps enough bytes in flight
per SM; masking (offs < n) makes any size correct, including sizes not a multiple of BLOCK.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def gelu_scale_add_kernel(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # exact (erf) GELU, as torch.nn.functional.gelu's default
    g = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, (g * scale + y).to(out_ptr.dtype.element_ty), mask=mask)


def gelu_scale_add(x: torch.Tensor, y: torch.Tensor, scale: float, block: int = 1024) -> torch.Tensor:
    assert x.shape == y.shape, "x and y must have the same shape"
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        gelu_scale_add_kernel[(triton.cdiv(n, block),)](x, y, out, n, scale, BLOCK=block, num_warps=4)
    return out


def _check() -> None:
    torch.manual_seed(0)
    for shape in [(37, 129), (4, 1024), (1000,)]:
        x, y = torch.randn(shape), torch.randn(shape)
        got = gelu_scale_add(x, y, 0.75, block=256)
        want = torch.nn.functional.gelu(x) * 0.75 + y
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("elementwise_chain: ok")
