"""Math functions Triton's language lacks, written in its primitives.

The CUDA libdevice functions have no implementation under Triton's interpreter, which the
cpu pool runs candidates on, so these are built from ``tl.exp``/``tl.log``/``tl.sqrt`` and
friends; each is accurate to a few float32 ulps over the ranges PyTorch's tests use. A
generated module carries only the helpers its kernels call.
"""

from __future__ import annotations

HELPERS: dict[str, str] = {
    # A float32 value rounded to bfloat16 and widened again, as PyTorch stores a bfloat16
    # result before the next operator reads it. On an NVIDIA GPU (PTX set) one packed
    # conversion rounds two values and shifts widen them: two conversions a value run on the
    # SM's quarter-rate pipe, and in a bfloat16 attention's score loop they set its speed
    # (0.51 -> 0.34 ms on an H200, the same bits). Only for tiles of many values
    # (ir.KernelWriter.packed_rounding): Triton refuses the packing on a one-element tile.
    # The interpreter runs no PTX.
    "_kv_round_bf16": '''
@triton.jit
def _kv_round_bf16(x, PTX: tl.constexpr):
    if PTX:
        bits = tl.inline_asm_elementwise(
            "{ .reg .b32 t; cvt.rn.bf16x2.f32 t, $3, $2; shl.b32 $0, t, 16; and.b32 $1, t, 0xffff0000; }",
            "=r,=r,r,r", [x.to(tl.uint32, bitcast=True)], dtype=tl.uint32, is_pure=True, pack=2)
        return bits.to(tl.float32, bitcast=True)
    else:
        return x.to(tl.bfloat16).to(tl.float32)
''',
    "_kv_mul": '''
@triton.jit
def _kv_mul(a, b):
    return a * b
''',
    "_kv_tanh": '''
@triton.jit
def _kv_tanh(x):
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -t, t)
''',
    "_kv_expm1": '''
@triton.jit
def _kv_expm1(x):
    u = tl.exp(x)
    # (u - 1) * x / log(u) cancels the rounding of u near 1 (Kahan's trick)
    return tl.where(u == 1.0, x, tl.where(u - 1.0 == -1.0, -1.0, (u - 1.0) * x / tl.log(u)))
''',
    "_kv_log1p": '''
@triton.jit
def _kv_log1p(x):
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * x / (u - 1.0))
''',
    "_kv_atan": '''
@triton.jit
def _kv_atan(x):
    a = tl.abs(x)
    z = tl.where(a > 1.0, 1.0 / a, a)
    # two argument halvings: atan(z) = 2 atan(z / (1 + sqrt(1 + z^2))), then a short series
    z = z / (1.0 + tl.sqrt(1.0 + z * z))
    z = z / (1.0 + tl.sqrt(1.0 + z * z))
    z2 = z * z
    s = z * (1.0 + z2 * (-1.0 / 3.0 + z2 * (1.0 / 5.0 + z2 * (-1.0 / 7.0 + z2 * (1.0 / 9.0 - z2 / 11.0)))))
    s = 4.0 * s
    r = tl.where(a > 1.0, 1.5707963267948966 - s, s)
    r = tl.where(a != a, a, r)
    return tl.where(x < 0, -r, r)
''',
    "_kv_atan2": '''
@triton.jit
def _kv_atan2(y, x):
    # Signed zeros decide the quadrant as in torch: atan2(-0.0, -1) = -pi, atan2(0, -0.0) = pi.
    neg_y = (y < 0) | ((y == 0) & ((1.0 / y) < 0))
    neg_x = (x < 0) | ((x == 0) & ((1.0 / x) < 0))
    base = _kv_atan(y / x)
    pi = 3.141592653589793
    on_axis = tl.where(y != 0, tl.where(neg_y, -pi / 2, pi / 2),
                       tl.where(neg_x, tl.where(neg_y, -pi, pi), 0.0 * y))
    r = tl.where(x == 0, on_axis, tl.where(x > 0, base, tl.where(neg_y, base - pi, base + pi)))
    return r
''',
    "_kv_pow": '''
@triton.jit
def _kv_pow(a, b):
    b = a * 0.0 + b  # a scalar exponent becomes a tensor like a
    r = tl.exp2(b * tl.log2(tl.abs(a)))
    is_int = b == tl.floor(b)
    odd = is_int & (tl.floor(b * 0.5) * 2.0 != b)
    r = tl.where((a < 0) & odd, -r, r)
    r = tl.where((a < 0) & (is_int == 0), float("nan"), r)
    r = tl.where(b == 0, 1.0, r)
    r = tl.where((a == 1.0), 1.0, r)
    return r
''',
    "_kv_round": '''
@triton.jit
def _kv_round(x):
    r = tl.floor(x + 0.5)
    half = (r - x) == 0.5
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    return tl.where(half & odd, r - 1.0, r)
''',
    "_kv_trunc": '''
@triton.jit
def _kv_trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
''',
    "_kv_fmod": '''
@triton.jit
def _kv_fmod(a, b):
    # C's fmod, exact while the quotient is below 2**24: the fused a - q*b of the truncated
    # quotient is the remainder itself; a quotient rounded across an integer is put right.
    x = a / b
    q = tl.where(x < 0, tl.ceil(x), tl.floor(x))
    r = tl.fma(-q, b, a)
    ab = tl.abs(b)
    r = tl.where((r != 0) & ((r < 0) != (a < 0)), r + tl.where(r < 0, ab, -ab), r)
    return tl.where(tl.abs(r) >= ab, r - tl.where(r < 0, -ab, ab), r)
''',
    "_kv_max": '''
@triton.jit
def _kv_max(a, b):
    return tl.where((a > b) | (a != a), a, b)
''',
    "_kv_min": '''
@triton.jit
def _kv_min(a, b):
    return tl.where((a < b) | (a != a), a, b)
''',
    "_kv_erfinv": '''
@triton.jit
def _kv_erfinv(x):
    # Giles' single-precision approximation
    w = -tl.log((1.0 - x) * (1.0 + x))
    wc = w - 2.5
    p1 = 2.81022636e-08
    p1 = 3.43273939e-07 + p1 * wc
    p1 = -3.5233877e-06 + p1 * wc
    p1 = -4.39150654e-06 + p1 * wc
    p1 = 0.00021858087 + p1 * wc
    p1 = -0.00125372503 + p1 * wc
    p1 = -0.00417768164 + p1 * wc
    p1 = 0.246640727 + p1 * wc
    p1 = 1.50140941 + p1 * wc
    wt = tl.sqrt(tl.maximum(w, 5.0)) - 3.0
    p2 = -0.000200214257
    p2 = 0.000100950558 + p2 * wt
    p2 = 0.00134934322 + p2 * wt
    p2 = -0.00367342844 + p2 * wt
    p2 = 0.00573950773 + p2 * wt
    p2 = -0.0076224613 + p2 * wt
    p2 = 0.00943887047 + p2 * wt
    p2 = 1.00167406 + p2 * wt
    p2 = 2.83297682 + p2 * wt
    p = tl.where(w < 5.0, p1, p2)
    return p * x
''',
    "_kv_lgamma": '''
@triton.jit
def _kv_lgamma(x):
    # Lanczos (g=7, n=9) for x >= 0.5, reflection below
    xr = tl.where(x < 0.5, 1.0 - x, x) - 1.0
    s = 0.99999999999980993
    s += 676.5203681218851 / (xr + 1.0)
    s += -1259.1392167224028 / (xr + 2.0)
    s += 771.32342877765313 / (xr + 3.0)
    s += -176.61502916214059 / (xr + 4.0)
    s += 12.507343278686905 / (xr + 5.0)
    s += -0.13857109526572012 / (xr + 6.0)
    s += 9.9843695780195716e-6 / (xr + 7.0)
    s += 1.5056327351493116e-7 / (xr + 8.0)
    t = xr + 7.5
    lg = 0.9189385332046727 + (xr + 0.5) * tl.log(t) - t + tl.log(s)
    pi = 3.141592653589793
    refl = tl.log(pi / tl.abs(tl.sin(pi * x))) - lg
    return tl.where(x < 0.5, refl, lg)
''',
    # PyTorch's calc_digamma: -inf at +0 (+inf at -0), NaN at negative integers, reflection
    # (psi(1 - x) - pi / tan(pi * frac(x))) below 0, the recurrence psi(x) = psi(x + 1) - 1/x
    # up to 10 (ten steps cover any x in (0, 10)), then the asymptotic series.
    "_kv_digamma": '''
@triton.jit
def _kv_digamma(x):
    pi = 3.141592653589793
    neg = x < 0
    v = tl.where(neg, 1.0 - x, x)
    r = x - tl.where(x < 0, tl.ceil(x), tl.floor(x))
    result = tl.where(neg, -pi / (tl.sin(pi * r) / tl.cos(pi * r)), 0.0)
    for _ in tl.static_range(10):
        low = v < 10.0
        result = tl.where(low, result - 1.0 / v, result)
        v = tl.where(low, v + 1.0, v)
    z = 1.0 / (v * v)
    p = 8.33333333333333333333e-2
    p = p * z - 2.10927960927960927961e-2
    p = p * z + 7.57575757575757575758e-3
    p = p * z - 4.16666666666666666667e-3
    p = p * z + 3.96825396825396825397e-3
    p = p * z - 8.33333333333333333333e-3
    p = p * z + 8.33333333333333333333e-2
    y = tl.where(v < 1.0e17, z * p, 0.0)
    out = result + tl.log(v) - 0.5 / v - y
    out = tl.where(neg & (x == tl.floor(x)), float("nan"), out)
    zero = tl.where((1.0 / x) < 0, float("inf"), float("-inf"))
    return tl.where(x == 0, zero, out)
''',
}

# Helpers that call other helpers.
DEPENDS = {"_kv_atan2": ["_kv_atan"]}


def helper_source(names: set[str]) -> str:
    """The source of ``names`` and what they call, in a definable order."""
    wanted: list[str] = []

    def add(name: str) -> None:
        for dep in DEPENDS.get(name, []):
            add(dep)
        if name not in wanted:
            wanted.append(name)

    for name in sorted(names):
        add(name)
    return "".join(HELPERS[n] for n in wanted)
