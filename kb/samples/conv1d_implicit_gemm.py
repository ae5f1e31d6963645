"""Conv1d (NCL, groups=1) as an implicit GEMM: no im2col buffer is ever written.

Reasoning: conv1d is a GEMM with M = batch*L_out output positions, N = C_out channels and
K = C_in*kernel_size taps. Materialising im2col would write and re-read a [M, K] matrix
(kernel_size times the input). Instead each program computes a BLOCK_M x BLOCK_N output
tile and, for each BLOCK_K slice of K, gathers the input taps on the fly: k -> (c_in, tap),
position = l_out*stride - padding + tap*dilation, masked to zero outside [0, L_in) (this
is the zero padding). Weights [C_out, C_in, ks] are read as a [K, N] matrix. fp32
accumulation, bias fused in the epilogue, one store of the output.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl


@triton.jit
def conv1d_igemm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, B, C_in, L_in, C_out, L_out, stride, padding, dilation,
                        KS: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)        # (batch, l_out) flattened
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)        # output channel
    bidx = rm // L_out
    lout = rm % L_out
    K = C_in * KS
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        cin = ks // KS
        tap = ks % KS
        pos = lout[:, None] * stride - padding + tap[None, :] * dilation
        amask = (rm[:, None] < B * L_out) & (ks[None, :] < K) & (pos >= 0) & (pos < L_in)
        a = tl.load(x_ptr + (bidx[:, None].to(tl.int64) * C_in + cin[None, :]) * L_in + pos, mask=amask, other=0.0)
        wmask = (ks[:, None] < K) & (rn[None, :] < C_out)
        w = tl.load(w_ptr + rn[None, :] * K + ks[:, None], mask=wmask, other=0.0)
        acc = tl.dot(a, w, acc, allow_tf32=False)
    if HAS_BIAS:
        acc += tl.load(b_ptr + rn, mask=rn < C_out, other=0.0).to(tl.float32)[None, :]
    optr = out_ptr + (bidx[:, None].to(tl.int64) * C_out + rn[None, :]) * L_out + lout[:, None]
    tl.store(optr, acc.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < B * L_out) & (rn[None, :] < C_out))


def conv1d(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, stride: int = 1, padding: int = 0,
           dilation: int = 1, block_m: int = 64, block_n: int = 32, block_k: int = 32) -> torch.Tensor:
    x, w = x.contiguous(), w.contiguous()
    B, C_in, L_in = x.shape
    C_out, _, ks = w.shape
    L_out = (L_in + 2 * padding - dilation * (ks - 1) - 1) // stride + 1
    out = torch.empty(B, C_out, L_out, dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(B * L_out, block_m), triton.cdiv(C_out, block_n))
    conv1d_igemm_kernel[grid](x, w, bias if bias is not None else w, out, B, C_in, L_in, C_out, L_out,
                              stride, padding, dilation, KS=ks, HAS_BIAS=bias is not None,
                              BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4)
    return out


def _check() -> None:
    torch.manual_seed(0)
    for (b, cin, lin, cout, ks), (s, p, d) in [((2, 5, 37, 7, 3), (1, 1, 1)), ((3, 4, 50, 9, 5), (2, 3, 2))]:
        x, w, bias = torch.randn(b, cin, lin), torch.randn(cout, cin, ks) * 0.2, torch.randn(cout)
        ref = torch.nn.functional.conv1d(x, w, bias, stride=s, padding=p, dilation=d)
        torch.testing.assert_close(conv1d(x, w, bias, s, p, d, 32, 16, 16), ref, atol=1e-4, rtol=1e-4)


def _device() -> str:
    # The GPU when there is one (and the interpreter is off), else the CPU interpreter.
    return "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"


def check() -> None:
    """Compare against PyTorch on random inputs (raises on mismatch)."""
    with torch.device(_device()):
        _check()


if __name__ == "__main__":
    check()
    print("conv1d_implicit_gemm: ok")
