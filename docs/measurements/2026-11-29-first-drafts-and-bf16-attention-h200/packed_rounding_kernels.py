import triton
import triton.language as tl


@triton.jit
def _kv_round_bf16(x, PTX: tl.constexpr):
    if PTX:
        bits = tl.inline_asm_elementwise(
            "{ .reg .b32 t; cvt.rn.bf16x2.f32 t, $3, $2; shl.b32 $0, t, 16; and.b32 $1, t, 0xffff0000; }",
            "=r,=r,r,r", [x.to(tl.uint32, bitcast=True)], dtype=tl.uint32, is_pure=True, pack=2)
        return bits.to(tl.float32, bitcast=True)
    else:
        return x.to(tl.bfloat16).to(tl.float32)


@triton.jit
def rows(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    off = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + off, _kv_round_bf16(tl.load(x_ptr + off), True))


@triton.jit
def flat(x_ptr, y_ptr, N: tl.constexpr):
    off = tl.arange(0, N)
    tl.store(y_ptr + off, _kv_round_bf16(tl.load(x_ptr + off), True))


@triton.jit
def reduced(x_ptr, raw_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    off = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    total = tl.sum(tl.load(x_ptr + off), 1)[:, None]
    tl.store(raw_ptr + tl.arange(0, R)[:, None], total)
    tl.store(y_ptr + tl.arange(0, R)[:, None], _kv_round_bf16(total, True))


@triton.jit
def product(a_ptr, b_ptr, c_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    off = rm[:, None] * N + rn[None, :]
    acc = acc * 0.125 + tl.load(c_ptr + off).to(tl.float32)  # mixed with a blocked-layout load
    tl.store(y_ptr + off, acc)
    tl.store(y_ptr + M * N + off, _kv_round_bf16(acc, True))
