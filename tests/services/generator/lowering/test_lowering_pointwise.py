"""Every elementwise operator a spec commonly uses, through the general lowering."""

from __future__ import annotations

import pytest
from lowering_check import check

UNARY = {
    "abs": "x.abs()", "neg": "-x", "exp": "x.exp()", "exp2": "torch.exp2(x)", "expm1": "torch.expm1(x)",
    "log": "(x.abs() + 0.1).log()", "log2": "torch.log2(x.abs() + 0.1)", "log10": "torch.log10(x.abs() + 0.1)",
    "log1p": "torch.log1p(x.abs())", "sqrt": "x.abs().sqrt()", "rsqrt": "torch.rsqrt(x.abs() + 0.5)",
    "sin": "x.sin()", "cos": "x.cos()", "tan": "torch.tan(x.clamp(-1.2, 1.2))", "tanh": "x.tanh()",
    "sinh": "torch.sinh(x)", "cosh": "torch.cosh(x)", "asin": "torch.asin(x.clamp(-0.99, 0.99))",
    "acos": "torch.acos(x.clamp(-0.99, 0.99))", "atan": "torch.atan(x * 3)", "asinh": "torch.asinh(x)",
    "acosh": "torch.acosh(x.abs() + 1.01)", "atanh": "torch.atanh(x.clamp(-0.9, 0.9))",
    "erf": "torch.erf(x)", "erfc": "torch.erfc(x)", "erfinv": "torch.erfinv(x.clamp(-0.95, 0.95))",
    "sigmoid": "torch.sigmoid(x)", "logsigmoid": "F.logsigmoid(x)", "floor": "torch.floor(x * 3)",
    "ceil": "torch.ceil(x * 3)", "round": "torch.round(x * 3)", "trunc": "torch.trunc(x * 3)",
    "frac": "torch.frac(x * 3)", "sign": "torch.sign(x)", "reciprocal": "torch.reciprocal(x.abs() + 0.5)",
    "square": "torch.square(x)", "lgamma": "torch.lgamma(x.abs() + 0.5)",
    "cbrt_pow": "x.abs().pow(1 / 3)",
    # Poles at 0 (signed) and the negative integers, the series' switch at 10, a huge value.
    "digamma": "torch.digamma(torch.cat([x.flatten() * 30, x.flatten() * 0.5 - 0.25, "
               "torch.tensor([0.0, -0.0, -3.0, 10.0, 1e18])]))",
    "relu": "F.relu(x)", "relu6": "F.relu6(x * 4)", "leaky": "F.leaky_relu(x, 0.2)", "elu": "F.elu(x)",
    "selu": "F.selu(x)", "celu": "F.celu(x)", "gelu": "F.gelu(x)", "gelu_tanh": "F.gelu(x, approximate='tanh')",
    "silu": "F.silu(x)", "mish": "F.mish(x)", "softplus": "F.softplus(x)", "softsign": "F.softsign(x)",
    "hardtanh": "F.hardtanh(x)", "hardswish": "F.hardswish(x * 3)", "hardsigmoid": "F.hardsigmoid(x * 3)",
    "tanhshrink": "F.tanhshrink(x)", "softshrink": "F.softshrink(x)", "hardshrink": "F.hardshrink(x)",
    "threshold": "F.threshold(x, 0.1, 20.0)", "logit": "torch.logit(torch.sigmoid(x), eps=1e-6)",
    "nan_to_num": "torch.nan_to_num(x / (x > 0).float())", "isnan": "torch.isnan(x / (x > 0).float())",
    "isinf": "torch.isinf(x / (x > 0).float())", "signbit": "torch.signbit(x)",
    "clamp": "x.clamp(-0.5, 0.7)", "clamp_min": "torch.clamp_min(x, 0.1)",
}
BINARY = {
    "add": "x + y", "sub": "x - y * 2", "mul": "x * y", "div": "x / (y.abs() + 0.5)",
    "floor_div": "torch.div(x * 5, y.abs() + 0.5, rounding_mode='floor')",
    "trunc_div": "torch.div(x * 5, y.abs() + 0.5, rounding_mode='trunc')",
    "pow": "(x.abs() + 0.1) ** y", "pow_scalar_base": "2.0 ** x", "atan2": "torch.atan2(x, y)",
    "maximum": "torch.maximum(x, y)", "minimum": "torch.minimum(x, y)", "fmod": "torch.fmod(x * 5, y.abs() + 0.5)",
    "remainder": "torch.remainder(x * 5, y.abs() + 0.5)", "hypot": "torch.hypot(x, y)",
    "lerp": "torch.lerp(x, y, 0.3)", "addcmul": "torch.addcmul(x, x, y, value=0.5)",
    "addcdiv": "torch.addcdiv(x, x, y.abs() + 1, value=0.5)", "where_cmp": "torch.where(x > y, x, y)",
    "eq_ne": "(x == x) & (x != y)", "lt_le_ge": "(x < y) | (x <= 0) | (y >= 1)", "copysign": "torch.copysign(x, y)",
    "logaddexp": "torch.logaddexp(x, y)", "xlogy": "torch.xlogy(x.abs(), y.abs() + 0.5)",
    "clamp_tensor": "torch.clamp(x, min=y - 0.5, max=y + 0.5)", "broadcast": "x * y[:1]",
    "float_int": "x * torch.arange(x.shape[-1])", "bool_and": "(x > 0) & (y > 0)", "xor": "(x > 0) ^ (y > 0)",
}
INTS = {
    "int_add_mul": "a * 3 + b", "int_div_floor": "a // (b.abs() + 1)", "int_mod": "a % (b.abs() + 1)",
    "int_and_or": "(a & b) | (a ^ 7)", "int_shift": "(a.abs() << 2) >> 1", "int_neg_abs": "(-a).abs()",
    "int_max": "torch.maximum(a, b)", "int_where": "torch.where(a > 0, a, b)", "int_to_float": "a.float() / 3",
    "float_to_int": "(a.float() * 0.7).long()", "int_pow": "a ** 2", "bitwise_not": "~a",
    "int_clamp": "a.clamp(-3, 5)", "int_sign": "torch.sign(a)",
}

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"


def _spec(expr: str, args: str, inputs: str) -> str:
    return (HEAD + f"    def forward(self, {args}):\n        return {expr}\n\n\n"
            f"def get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name: str) -> None:
    check(_spec(UNARY[name], "x", "torch.randn(7, 37)"), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name: str) -> None:
    check(_spec(BINARY[name], "x, y", "torch.randn(5, 19), torch.randn(5, 19)"), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("name", sorted(INTS))
def test_integers(name: str) -> None:
    check(_spec(INTS[name], "a, b", "torch.randint(-20, 20, (4, 11)), torch.randint(-20, 20, (4, 11))"))


@pytest.mark.parametrize("dtype", ["half", "bfloat16", "double"])
def test_other_float_dtypes(dtype: str) -> None:
    tol = {"half": 2e-3, "bfloat16": 2e-2, "double": 1e-9}[dtype]
    check(_spec("F.gelu(x) * y + (x * y).sum(-1, keepdim=True)", "x, y",
                f"torch.randn(6, 23).{dtype}(), torch.randn(6, 23).{dtype}()"), atol=tol, rtol=tol)


def test_fmod_is_exact_where_the_quotient_rounds_across_an_integer() -> None:
    """Dividends a hair off whole multiples of the divisor: ``a / b`` rounds onto the integer,
    and a remainder computed from that quotient alone is off by a whole divisor."""
    inputs = ("(lambda b, n: [torch.nextafter(b * n, b * n * 2), b])"
              "(torch.rand(8, 64) * 3 + 0.5, torch.randint(-40, 40, (8, 64)).float())")
    check(_spec("torch.fmod(a, b)", "a, b", f"*{inputs}"), atol=1e-6, rtol=1e-6)


def test_bitwise_ops_on_unsigned_bytes() -> None:
    check(_spec("(~a) ^ (b & 0x0F)", "a, b",
                "torch.randint(0, 256, (6, 33), dtype=torch.uint8), torch.randint(0, 256, (6, 33), dtype=torch.uint8)"))


def test_atan2_follows_signed_zeros() -> None:
    inputs = ("torch.tensor([[0.0, -0.0, 0.0, -0.0, 1.0, -1.0, -2.0, 3.0]]).repeat(4, 1), "
              "torch.tensor([[-1.0, -1.0, -0.0, 0.0, -0.0, 0.0, 0.5, -4.0]]).repeat(4, 1)")
    check(_spec("torch.atan2(y, x)", "y, x", inputs), atol=1e-6, rtol=1e-6)
