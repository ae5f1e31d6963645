"""Jagged sum: per-sequence sums of a jagged [total, D] tensor given offsets [B+1] -> [B, D].

Reasoning: variable-length sequences (user histories) are stored packed, with offsets
marking where each batch element starts. Padding to the longest sequence would read
and add zeros for every short sequence; the jagged kernel touches only real rows: one
program per (sequence, D-block) walks its rows in BLOCK_L chunks, accumulating in fp32
registers, and writes one output row. Traffic = values read once + B*D written. Empty
sequences produce zeros. BLOCK_D columns per program keeps loads coalesced along D.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def jagged_sum_kernel(values_ptr, offsets_ptr, out_ptr, D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_ok = cols < D
    start = tl.load(offsets_ptr + b)
    end = tl.load(offsets_ptr + b + 1)
    acc = tl.zeros([BLOCK_L, BLOCK_D], tl.float32)
    for row0 in range(start, end, BLOCK_L):
        rows = row0 + tl.arange(0, BLOCK_L)
        m = (rows[:, None] < end) & col_ok[None, :]
        acc += tl.load(values_ptr + rows[:, None].to(tl.int64) * D + cols[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + b.to(tl.int64) * D + cols, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=col_ok)


def jagged_sum(values: torch.Tensor, offsets: torch.Tensor, block_l: int = 16, block_d: int = 64) -> torch.Tensor:
    values, offsets = values.contiguous(), offsets.contiguous()
    batch = offsets.numel() - 1
    D = values.shape[1]
    out = torch.empty(batch, D, dtype=values.dtype, device=values.device)
    if batch and D:
        jagged_sum_kernel[(batch, triton.cdiv(D, block_d))](values, offsets, out, D, BLOCK_L=block_l, BLOCK_D=block_d)
    return out


def _check() -> None:
    torch.manual_seed(0)
    for lengths, d in [([3, 0, 17, 1], 5), ([40, 2, 0, 0, 9], 70)]:
        lens = torch.tensor(lengths)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lens.cumsum(0)])
        values = torch.randn(int(lens.sum()), d)
        ref = torch.stack([values[offsets[i]:offsets[i + 1]].sum(0) for i in range(len(lengths))])
        torch.testing.assert_close(jagged_sum(values, offsets, 8, 32), ref, atol=1e-5, rtol=1e-5)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("jagged_sum: ok")
