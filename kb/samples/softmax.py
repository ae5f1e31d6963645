"""Row softmax and log-softmax over the last dim: whole row in registers, else online.

Memory-traffic reasoning: softmax needs a row max and a row sum before any output.
When the row fits in registers (next_pow2(N) <= ~8192 fp32 per program), one program
loads the row once, reduces max and sum in registers and writes once: 2 bytes-per-element
passes (read + write), the minimum. For longer rows the "online" variant keeps a running
max m and a running sum s rescaled by exp(m_old - m_new) while streaming the row, so it
reads the row twice (stats pass + normalize pass) instead of three times, and never
spills registers. log-softmax is x - m - log(s), the same statistics.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(tl.where(mask, e, 0.0), axis=0)
    y = (x - m - tl.log(s)) if LOG else e / s
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen nothing yet keep m = -inf; avoid (-inf) - (-inf) = nan
        alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    m_row = tl.max(m, axis=0)
    s_row = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - m_row)), axis=0)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - m_row - tl.log(s_row)) if LOG else tl.exp(x - m_row) / s_row
        tl.store(out_ptr + base + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, log: bool = False, max_whole_row: int = 8192, loop_block: int = 1024) -> torch.Tensor:
    shape = x.shape
    x2 = x.contiguous().view(-1, shape[-1])
    out = torch.empty_like(x2)
    rows, cols = x2.shape
    block = triton.next_power_of_2(cols)
    if rows and cols:
        if block <= max_whole_row:
            warps = max(1, min(16, block // 256))
            softmax_row_kernel[(rows,)](x2, out, cols, BLOCK_N=block, LOG=log, num_warps=warps)
        else:
            softmax_online_kernel[(rows,)](x2, out, cols, BLOCK_N=loop_block, LOG=log, num_warps=4)
    return out.view(shape)


def _check() -> None:
    torch.manual_seed(0)
    for rows, cols in [(7, 1000), (3, 77), (2, 3000)]:
        x = torch.randn(rows, cols) * 4.0
        for log in (False, True):
            want = torch.log_softmax(x, -1) if log else torch.softmax(x, -1)
            torch.testing.assert_close(softmax(x, log), want, atol=1e-5, rtol=1e-5)
            # force the online (looped) variant on the same data
            torch.testing.assert_close(softmax(x, log, max_whole_row=64, loop_block=256), want, atol=1e-5, rtol=1e-5)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("softmax: ok")
