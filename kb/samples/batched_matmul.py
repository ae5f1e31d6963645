"""Batched matmul C[b] = A[b] @ B[b] with a 3-D launch grid (tiles x tiles x batch).

Reasoning: each batch is an independent GEMM; putting the batch on grid axis 2 launches
all of them in one kernel instead of B launches (launch-bound for small matrices) and
lets the scheduler fill all SMs even when one matrix has few tiles. Inside a program it
is the classic tiled GEMM: BLOCK_K slices through tl.dot with an fp32 accumulator, masks
on every edge, arbitrary strides so transposed/non-contiguous views need no copy.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
               ALLOW_TF32: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_base = a_ptr + batch * sab
    b_base = b_ptr + batch * sbb
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_base + rm[:, None] * sam + ks[None, :] * sak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_base + ks[:, None] * sbk + rn[None, :] * sbn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, allow_tf32=ALLOW_TF32)
    c = c_ptr + batch * scb + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def bmm(a: torch.Tensor, b: torch.Tensor, block_m: int = 64, block_n: int = 64, block_k: int = 32) -> torch.Tensor:
    assert a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]
    batch, M, K = a.shape
    N = b.shape[2]
    c = torch.empty(batch, M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n), batch)
    bmm_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), ALLOW_TF32=False,
                     BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4, num_stages=3)
    return c


def _check() -> None:
    torch.manual_seed(0)
    for bsz, m, k, n in [(3, 20, 33, 17), (2, 64, 16, 40)]:
        a, b = torch.randn(bsz, m, k), torch.randn(bsz, k, n)
        torch.testing.assert_close(bmm(a, b, 32, 32, 16), torch.bmm(a, b), atol=1e-4, rtol=1e-4)
        # a transposed view: strides, not copies
        bt = torch.randn(bsz, n, k).transpose(1, 2)
        torch.testing.assert_close(bmm(a, bt, 32, 32, 16), torch.bmm(a, bt), atol=1e-4, rtol=1e-4)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("batched_matmul: ok")
