"""float32 products on tensor cores: Triton's tf32x3 (each K step splits the loaded tiles)
against operands split once in memory (hi = the tf32 part, lo = the rest; K-major copies) and
three plain tf32 products per K step, and cuBLAS's float32 GEMM (TF32 off).

    python3 split_once_probe.py [M N K ...]
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
import triton.testing


@triton.jit
def split_kernel(x_ptr, hi_ptr, lo_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    hi = (x.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)
    tl.store(hi_ptr + offs, hi, mask=mask)
    tl.store(lo_ptr + offs, x - hi, mask=mask)


@triton.jit
def gemm_x3(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # a [M, K], b [K, N] row-major, tf32x3 inside Triton.
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)[:, None]
    rn = pn * BN + tl.arange(0, BN)[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rka = k0 + tl.arange(0, BK)[None, :]
        rkb = k0 + tl.arange(0, BK)[:, None]
        a = tl.load(a_ptr + rm * K + rka, mask=(rm < M) & (rka < K), other=0.0)
        b = tl.load(b_ptr + rkb * N + rn, mask=(rkb < K) & (rn < N), other=0.0)
        acc += tl.dot(a, b, input_precision="tf32x3")
    tl.store(c_ptr + rm * N + rn, acc, mask=(rm < M) & (rn < N))


@triton.jit
def gemm_split(ah_ptr, al_ptr, bh_ptr, bl_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, B_KMAJOR: tl.constexpr, SUM: tl.constexpr):
    # a [M, K] row-major; b [N, K] (K-major) or [K, N].
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)[:, None]
    rn = pn * BN + tl.arange(0, BN)[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rka = k0 + tl.arange(0, BK)[None, :]
        rkb = k0 + tl.arange(0, BK)[:, None]
        am = (rm < M) & (rka < K)
        bmask = (rkb < K) & (rn < N)
        if B_KMAJOR:
            boff = rn * K + rkb
        else:
            boff = rkb * N + rn
        ah = tl.load(ah_ptr + rm * K + rka, mask=am, other=0.0)
        al = tl.load(al_ptr + rm * K + rka, mask=am, other=0.0)
        bh = tl.load(bh_ptr + boff, mask=bmask, other=0.0)
        bl = tl.load(bl_ptr + boff, mask=bmask, other=0.0)
        if SUM == 0:  # every product into the running accumulator
            acc = tl.dot(al, bh, acc, input_precision="tf32")
            acc = tl.dot(ah, bl, acc, input_precision="tf32")
            acc = tl.dot(ah, bh, acc, input_precision="tf32")
        elif SUM == 1:  # the K step's three products from zero, added in float32
            p = tl.dot(al, bh, input_precision="tf32")
            p = tl.dot(ah, bl, p, input_precision="tf32")
            p = tl.dot(ah, bh, p, input_precision="tf32")
            acc += p
        else:  # the small products from zero, the large one into the running accumulator
            p = tl.dot(al, bh, input_precision="tf32")
            p = tl.dot(ah, bl, p, input_precision="tf32")
            acc = tl.dot(ah, bh, acc, input_precision="tf32")
            acc += p
    tl.store(c_ptr + rm * N + rn, acc, mask=(rm < M) & (rn < N))


def split(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    hi, lo = torch.empty_like(x), torch.empty_like(x)
    n = x.numel()
    split_kernel[(triton.cdiv(n, 1024),)](x, hi, lo, n, BLOCK=1024)
    return hi, lo


FULL = False
CONFIGS = [(128, 128, 32, 8, 3), (128, 128, 32, 4, 3), (128, 256, 32, 8, 2), (64, 128, 32, 4, 4), (128, 64, 32, 4, 4)]


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sizes = [int(s) for s in sys.argv[1:]] or [6144, 6144, 6144, 4096, 4096, 4096, 1024, 8192, 8192, 2048, 2048, 2048]
    for M, N, K in zip(sizes[0::3], sizes[1::3], sizes[2::3]):
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda")
        b = torch.randn(K, N, device="cuda")
        ref = (a.double() @ b.double()).float()
        flops = 2 * M * N * K
        rows = []
        t = triton.testing.do_bench(lambda: a @ b, rep=200)
        err = ((a @ b) - ref).abs().max().item()
        rows.append(("cublas_fp32", t, err))
        torch.backends.cuda.matmul.allow_tf32 = True
        rows.append(("cublas_tf32 (accuracy floor of one tf32 product)", triton.testing.do_bench(lambda: a @ b, rep=100),
                     ((a @ b) - ref).abs().max().item()))
        torch.backends.cuda.matmul.allow_tf32 = False
        c = torch.empty(M, N, device="cuda")
        for BM, BN, BK, w, s in [(128, 64, 16, 4, 3)]:
            grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
            try:
                f = lambda: gemm_x3[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=w, num_stages=s)  # noqa: E731
                f()
                rows.append((f"tf32x3 {BM}x{BN}x{BK} w{w} s{s}", triton.testing.do_bench(f, rep=200),
                             (c - ref).abs().max().item()))
            except Exception as exc:  # noqa: BLE001
                rows.append((f"tf32x3 {BM}x{BN}x{BK}", float("nan"), str(exc)[:80]))
        bt = b.t().contiguous()
        for kmajor in (True, False) if FULL else (True,):
            src = bt if kmajor else b
            for how in (0, 1, 2):
                for BM, BN, BK, w, s in CONFIGS:
                    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))

                    def run() -> None:
                        ah, al = split(a)
                        bh, bl = split(src)
                        gemm_split[grid](ah, al, bh, bl, c, M, N, K, BM=BM, BN=BN, BK=BK, B_KMAJOR=kmajor,
                                         SUM=how, num_warps=w, num_stages=s)
                    try:
                        run()
                        rows.append((f"split{how} {'kmaj' if kmajor else 'nmaj'} {BM}x{BN}x{BK} w{w} s{s}",
                                     triton.testing.do_bench(run, rep=200), (c - ref).abs().max().item()))
                    except Exception as exc:  # noqa: BLE001
                        rows.append((f"split{how} {BM}x{BN}x{BK} w{w} s{s}", float("nan"), str(exc)[:80]))
        print(f"== {M}x{N}x{K}")
        for name, ms, err in rows:
            print(f"{name:40s} {ms:9.4f} ms {flops / ms / 1e9:8.1f} TFLOP/s  maxerr {err}")


if __name__ == "__main__":
    main()
