"""RMSNorm over the last dim, forward and backward: y = x * rsqrt(mean(x^2) + eps) * w.

Memory-traffic reasoning. Forward keeps the row in registers: one read of x, one write of
y, and 4 bytes per row of saved rstd so the backward skips a reduction. Backward:
dx = rstd * (w*dy - xhat * mean(w*dy*xhat)) with xhat = x*rstd needs one row sum, so it is
one read of x and dy and one write of dx; dw = sum over rows of dy*xhat is accumulated in
fp32 registers over GROUP rows per program and written as one partial row, then reduced
by a small second kernel (no atomics, deterministic).
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rmsnorm_bwd_kernel(x_ptr, w_ptr, dy_ptr, rstd_ptr, dx_ptr, dw_part_ptr, n_rows, n_cols,
                       GROUP: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    for i in range(GROUP):
        row = pid * GROUP + i
        if row < n_rows:
            off = row.to(tl.int64) * n_cols + cols
            x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
            rstd = tl.load(rstd_ptr + row)
            xhat = x * rstd
            wdy = w * dy
            c = tl.sum(wdy * xhat, axis=0) / n_cols
            tl.store(dx_ptr + off, (rstd * (wdy - xhat * c)).to(dx_ptr.dtype.element_ty), mask=mask)
            dw += dy * xhat
    tl.store(dw_part_ptr + pid * n_cols + cols, dw, mask=mask)


@triton.jit
def column_sum_kernel(part_ptr, out_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_parts, BLOCK_P):
        parts = start + tl.arange(0, BLOCK_P)
        m = (parts[:, None] < n_parts) & (cols[None, :] < n_cols)
        acc += tl.sum(tl.load(part_ptr + parts[:, None] * n_cols + cols[None, :], mask=m, other=0.0), axis=0)
    tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=cols < n_cols)


class RMSNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:  # type: ignore[override]
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, cols = x2.shape
        y = torch.empty_like(x2)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(cols)
        rmsnorm_fwd_kernel[(rows,)](x2, w, y, rstd, cols, eps, BLOCK_N=block, num_warps=max(1, min(16, block // 256)))
        ctx.save_for_backward(x2, w, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy: torch.Tensor):  # type: ignore[override]
        x2, w, rstd = ctx.saved_tensors
        rows, cols = x2.shape
        group = 8
        parts = triton.cdiv(rows, group)
        dx = torch.empty_like(x2)
        dw_part = torch.empty(parts, cols, dtype=torch.float32, device=x2.device)
        rmsnorm_bwd_kernel[(parts,)](x2, w, dy.contiguous().view(-1, cols), rstd, dx, dw_part, rows, cols,
                                     GROUP=group, BLOCK_N=triton.next_power_of_2(cols))
        dw = torch.empty(cols, dtype=w.dtype, device=w.device)
        column_sum_kernel[(triton.cdiv(cols, 128),)](dw_part, dw, parts, cols, BLOCK_P=16, BLOCK_N=128)
        return dx.view(dy.shape), dw, None


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFn.apply(x, w, eps)


def _check() -> None:
    torch.manual_seed(0)
    for rows, cols in [(21, 96), (3, 300)]:
        x = (torch.randn(rows, cols) * 2 + 0.5).requires_grad_()
        w = (torch.randn(cols) * 0.1 + 1).requires_grad_()
        dy = torch.randn(rows, cols)
        y = rms_norm(x, w)
        grads = torch.autograd.grad(y, (x, w), dy)
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        ref_grads = torch.autograd.grad(ref, (x, w), dy)
        torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
        for g, r in zip(grads, ref_grads, strict=True):
            torch.testing.assert_close(g, r, atol=1e-4, rtol=1e-4)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("rmsnorm: ok")
