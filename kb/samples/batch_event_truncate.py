"""Batch event truncate: keep at most the last K events of each jagged sequence.

Semantics: values [total, D] with offsets [B+1]; each sequence keeps its most recent
min(len, K) events (the tail), giving new offsets and packed values. Reasoning: event
histories are truncated before attention/pooling; copying only the kept rows reads and
writes exactly kept_rows*D elements. The new offsets are an exclusive prefix sum of
min(len, K), computed by one small kernel with tl.cumsum over the (short) batch; the
copy kernel then runs one program per (sequence, row-block), each reading its source
start from the old offsets, so no row is touched twice and dropped rows are never read.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def truncated_offsets_kernel(offsets_ptr, new_offsets_ptr, B, K, BLOCK_B: tl.constexpr):
    # one program: the batch of sequence lengths is small (a few thousand at most)
    carry = tl.zeros([1], tl.int64)
    tl.store(new_offsets_ptr + tl.arange(0, 1), carry)
    for b0 in range(0, B, BLOCK_B):
        bs = b0 + tl.arange(0, BLOCK_B)
        ok = bs < B
        lens = tl.load(offsets_ptr + bs + 1, mask=ok, other=0) - tl.load(offsets_ptr + bs, mask=ok, other=0)
        kept = tl.minimum(lens, K)
        incl = tl.cumsum(kept, axis=0) + carry
        tl.store(new_offsets_ptr + bs + 1, incl, mask=ok)
        carry += tl.sum(kept, axis=0)


@triton.jit
def truncate_copy_kernel(values_ptr, offsets_ptr, new_offsets_ptr, out_ptr, D, BLOCK_R: tl.constexpr,
                         BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    r0 = tl.program_id(1) * BLOCK_R
    end = tl.load(offsets_ptr + b + 1)
    dst = tl.load(new_offsets_ptr + b)
    kept = tl.load(new_offsets_ptr + b + 1) - dst
    rows = r0 + tl.arange(0, BLOCK_R)
    src_rows = (end - kept + rows).to(tl.int64)        # the last `kept` rows
    dst_rows = (dst + rows).to(tl.int64)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        m = (rows[:, None] < kept) & (cols[None, :] < D)
        v = tl.load(values_ptr + src_rows[:, None] * D + cols[None, :], mask=m)
        tl.store(out_ptr + dst_rows[:, None] * D + cols[None, :], v, mask=m)


def batch_event_truncate(values: torch.Tensor, offsets: torch.Tensor, max_len: int, block_r: int = 16,
                         block_d: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    values, offsets = values.contiguous(), offsets.contiguous().to(torch.int64)
    batch, D = offsets.numel() - 1, values.shape[1]
    new_offsets = torch.empty(batch + 1, dtype=torch.int64, device=values.device)
    truncated_offsets_kernel[(1,)](offsets, new_offsets, batch, max_len, BLOCK_B=256)
    total = int(new_offsets[-1])  # the output size must be known to allocate it
    out = torch.empty(total, D, dtype=values.dtype, device=values.device)
    if batch and total:
        grid = (batch, triton.cdiv(max_len, block_r))
        truncate_copy_kernel[grid](values, offsets, new_offsets, out, D, BLOCK_R=block_r, BLOCK_D=block_d)
    return out, new_offsets


def _check() -> None:
    torch.manual_seed(0)
    for lengths, d, k in [([5, 0, 12, 3], 4, 4), ([1, 30, 7], 33, 10), ([300] * 3, 2, 257)]:
        lens = torch.tensor(lengths)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lens.cumsum(0)])
        values = torch.randn(int(lens.sum()), d)
        out, new_offsets = batch_event_truncate(values, offsets, k, block_r=8, block_d=16)
        kept = lens.clamp(max=k)
        ref = torch.cat([values[offsets[i + 1] - kept[i]:offsets[i + 1]] for i in range(len(lengths))])
        torch.testing.assert_close(new_offsets, torch.cat([torch.zeros(1, dtype=torch.int64), kept.cumsum(0)]))
        torch.testing.assert_close(out, ref)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("batch_event_truncate: ok")
