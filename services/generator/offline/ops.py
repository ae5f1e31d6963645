"""Pointwise operator table: traced op name -> Triton expression over fp32 values.

Every kernel computes in fp32 (loads are cast up, the store casts to the output dtype), so
the formulas below only need to be right in fp32. `{a}`/`{b}` are SSA variable names, so
repeating them in a formula costs no extra loads.
"""
from __future__ import annotations


class Unsupported(ValueError):
    """The graph uses something no template implements; the message names it."""


class DoesNotFit(Unsupported):
    """This tunable set of a template does not fit the GPU at this spec's shape (its tiles
    overflow shared memory or registers); the template's other sets may."""

# Unary ops; extra keyword parameters (e.g. a leaky_relu slope) are formatted in by name.
UNARY: dict[str, str] = {
    "relu": "tl.maximum({a}, 0.0)",
    "relu6": "tl.minimum(tl.maximum({a}, 0.0), 6.0)",
    "sigmoid": "tl.sigmoid({a})",
    "silu": "{a} * tl.sigmoid({a})",
    # tanh through sigmoid: exact in fp32 to ~1 ulp of the result and saturates cleanly.
    "tanh": "(2.0 * tl.sigmoid(2.0 * {a}) - 1.0)",
    "gelu": "0.5 * {a} * (1.0 + tl.math.erf({a} * 0.7071067811865476))",
    "gelu_tanh": "0.5 * {a} * (1.0 + (2.0 * tl.sigmoid(2.0 * (0.7978845608028654 * ({a} + 0.044715 * {a} * {a} * {a}))) - 1.0))",
    "exp": "tl.exp({a})",
    "log": "tl.log({a})",
    "log1p": "tl.log(1.0 + {a})",
    "expm1": "(tl.exp({a}) - 1.0)",
    "sqrt": "tl.sqrt({a})",
    "rsqrt": "(1.0 / tl.sqrt({a}))",
    "abs": "tl.abs({a})",
    "neg": "(-{a})",
    "reciprocal": "(1.0 / {a})",
    "square": "({a} * {a})",
    "sin": "tl.sin({a})",
    "cos": "tl.cos({a})",
    "erf": "tl.math.erf({a})",
    "floor": "tl.math.floor({a})",
    "ceil": "tl.math.ceil({a})",
    "softplus": "tl.where({a} * {beta} > {threshold}, {a}, tl.log(1.0 + tl.exp({a} * {beta})) / {beta})",
    "mish": "{a} * (2.0 * tl.sigmoid(2.0 * tl.where({a} > 20.0, {a}, tl.log(1.0 + tl.exp({a})))) - 1.0)",
    "elu": "tl.where({a} > 0.0, {a}, {alpha} * (tl.exp({a}) - 1.0))",
    "selu": "1.0507009873554805 * tl.where({a} > 0.0, {a}, 1.6732632423543772 * (tl.exp({a}) - 1.0))",
    "leaky_relu": "tl.where({a} >= 0.0, {a}, {a} * {negative_slope})",
    "hardtanh": "tl.minimum(tl.maximum({a}, {min_val}), {max_val})",
    "hardsigmoid": "tl.minimum(tl.maximum({a} / 6.0 + 0.5, 0.0), 1.0)",
    "hardswish": "{a} * tl.minimum(tl.maximum({a} + 3.0, 0.0), 6.0) / 6.0",
    "clamp_min": "tl.maximum({a}, {min_val})",
    "clamp_max": "tl.minimum({a}, {max_val})",
    "clamp": "tl.minimum(tl.maximum({a}, {min_val}), {max_val})",
    "identity": "{a}",
    "powi2": "({a} * {a})",
    "powi3": "({a} * {a} * {a})",
    "powi4": "(({a} * {a}) * ({a} * {a}))",
    "pow_const": "tl.exp2({exponent} * tl.log2({a}))",
    # Eager PyTorch rounds every half-precision op's result to its dtype; kernels compute in
    # fp32 and mirror that rounding where the traced graph has it, so they match the
    # reference to its own precision rather than drifting by several half-precision ulps.
    "round_float16": "{a}.to(tl.float16).to(tl.float32)",
    # bf16 round-to-nearest-even on the fp32 bits: the Triton interpreter's fp32 -> bf16 cast
    # truncates, so the bit form gives the same result on every backend (inf/nan preserved).
    "round_bfloat16": "((({a}).to(tl.uint32, bitcast=True) + 0x7FFF + ((({a}).to(tl.uint32, bitcast=True) >> 16) & 1))"
                      " & 0xFFFF0000).to(tl.float32, bitcast=True)",
}

BINARY: dict[str, str] = {
    "add": "({a} + {b})",
    "sub": "({a} - {b})",
    "mul": "({a} * {b})",
    "div": "({a} / {b})",
    "maximum": "tl.maximum({a}, {b})",
    "minimum": "tl.minimum({a}, {b})",
    "gt": "({a} > {b})",
    "lt": "({a} < {b})",
    "ge": "({a} >= {b})",
    "le": "({a} <= {b})",
    "eq": "({a} == {b})",
    "ne": "({a} != {b})",
}

# Reductions over the last dim: identity element for masked lanes and the tl reducer.
REDUCE: dict[str, tuple[str, str]] = {
    "sum": ("0.0", "tl.sum"),
    "max": ('-float("inf")', "tl.max"),
    "min": ('float("inf")', "tl.min"),
}

# Traced names that mean the same pointwise op.
ALIASES: dict[str, str] = {
    "truediv": "div", "true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub",
    "negative": "neg", "clip": "clamp", "relu_": "relu", "sigmoid_": "sigmoid", "tanh_": "tanh",
    "exp_": "exp", "floordiv": "unsupported", "max_pointwise": "maximum", "mul_": "mul", "add_": "add",
    "sub_": "sub", "div_": "div", "clamp_": "clamp", "silu_": "silu", "gelu_": "gelu",
    "greater": "gt", "less": "lt", "greater_equal": "ge", "less_equal": "le", "not_equal": "ne",
}

# Ops that do not change values in the fp32 compute domain.
IDENTITY = {"contiguous", "clone", "detach", "float", "to", "type_as", "type", "Identity", "dropout_eval"}

# nn module class names -> functional names (with their attributes read from the module).
MODULE_FUNCS: dict[str, str] = {
    "ReLU": "relu", "ReLU6": "relu6", "Sigmoid": "sigmoid", "SiLU": "silu", "Tanh": "tanh", "GELU": "gelu",
    "Softplus": "softplus", "Mish": "mish", "ELU": "elu", "SELU": "selu", "LeakyReLU": "leaky_relu",
    "Hardtanh": "hardtanh", "Hardsigmoid": "hardsigmoid", "Hardswish": "hardswish", "Identity": "identity",
    "Softmax": "softmax", "LogSoftmax": "log_softmax", "LayerNorm": "layer_norm", "RMSNorm": "rms_norm",
    "Dropout": "dropout", "Linear": "linear", "Conv1d": "conv1d",
}
