"""The general lowering on pooling: max pools with their indices (ties, NaN, -inf windows,
padding, dilation, ceil mode), average pools (every divisor rule), adaptive pools, in 1 to
3 spatial dimensions, float32 and float16, and pools fused with the work around them.

Indices are compared exactly; sizes are odd so that windows overhang the input.
"""

from __future__ import annotations

import pytest
from lowering_check import check

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(forward: str, inputs: str) -> str:
    """A spec returning ``forward`` (an expression of x) for get_inputs() = [``inputs``];
    ``inputs`` may instead be a body of statements that ends in a return."""
    body = inputs if "return" in inputs else f"return [{inputs}]"
    body = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return (HEAD + "\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            f"    def forward(self, x):\n        return {forward}\n\n\ndef get_inputs():\n{body}\n\n"
            "def get_init_inputs():\n    return []\n")


# Inputs whose windows hold ties, NaNs (several in one window) and only -inf.
SPECIAL_2D = """
x = torch.randint(-2, 3, (2, 3, 9, 11)).float()
x[0, 0, 1:3, 2] = float('nan')
x[1, 2, 4, 4:7] = float('nan')
x[0, 1, :5, :5] = float('-inf')
return [x]
"""
SPECIAL_3D = """
x = torch.randint(-2, 3, (2, 2, 5, 6, 7)).float()
x[0, 0, 1, 1:3, 2] = float('nan')
x[1, 1, :3, :3, :4] = float('-inf')
return [x]
"""

MAX_POOLS = {
    "2d_default_stride": ("F.max_pool2d(x, 2, return_indices=True)", "torch.randn(2, 3, 9, 11)"),
    "2d_pad_ceil": ("F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)", "torch.randn(2, 3, 9, 11)"),
    "2d_dilation": ("F.max_pool2d(x, 3, 2, 1, dilation=2, return_indices=True)", "torch.randn(2, 3, 9, 11)"),
    "2d_dilation_ceil": ("F.max_pool2d(x, 2, 3, 1, dilation=3, ceil_mode=True, return_indices=True)",
                         "torch.randn(1, 2, 10, 13)"),
    "2d_rect": ("F.max_pool2d(x, (2, 3), (1, 2), (1, 1), return_indices=True)", "torch.randn(2, 3, 7, 10)"),
    "2d_unbatched": ("F.max_pool2d(x, 3, 2, return_indices=True)", "torch.randn(3, 9, 11)"),
    "2d_ties_nan_inf": ("F.max_pool2d(x, 3, 2, 1, return_indices=True)", SPECIAL_2D),
    "2d_overlap_ties_nan_inf": ("F.max_pool2d(x, 3, 1, 1, return_indices=True)", SPECIAL_2D),
    "1d_indices": ("F.max_pool1d(x, 3, 2, 1, return_indices=True)", "torch.randn(2, 3, 12)"),
    "1d_values": ("nn.MaxPool1d(4, 3, ceil_mode=True)(x)", "torch.randn(2, 5, 17)"),
    "3d_default": ("F.max_pool3d(x, 2, return_indices=True)", "torch.randn(2, 3, 5, 6, 7)"),
    "3d_pad_dilation_ceil": ("F.max_pool3d(x, 3, 2, 1, dilation=(1, 2, 1), ceil_mode=True, return_indices=True)",
                             "torch.randn(1, 2, 6, 9, 8)"),
    "3d_ties_nan_inf": ("F.max_pool3d(x, 2, 2, 1, return_indices=True)", SPECIAL_3D),
}

AVG_POOLS = {
    "2d_default": ("F.avg_pool2d(x, 2)", "torch.randn(2, 3, 9, 11)"),
    "2d_pad_include": ("F.avg_pool2d(x, 3, 2, 1)", "torch.randn(2, 3, 9, 11)"),
    "2d_pad_exclude": ("F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)", "torch.randn(2, 3, 9, 11)"),
    "2d_ceil_include": ("F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)", "torch.randn(2, 3, 10, 12)"),
    "2d_ceil_exclude": ("F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)",
                        "torch.randn(2, 3, 10, 12)"),
    "2d_ceil_no_pad": ("F.avg_pool2d(x, (3, 2), (2, 3), ceil_mode=True)", "torch.randn(2, 3, 10, 11)"),
    "2d_divisor_override": ("F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=4)",
                            "torch.randn(2, 3, 10, 12)"),
    "2d_unbatched": ("F.avg_pool2d(x, 3, 1, 1)", "torch.randn(3, 7, 8)"),
    "1d": ("F.avg_pool1d(x, 4, 3, 2, ceil_mode=True, count_include_pad=False)", "torch.randn(2, 3, 14)"),
    "3d_pad_include": ("F.avg_pool3d(x, 3, 2, 1)", "torch.randn(2, 2, 5, 6, 7)"),
    "3d_ceil_exclude": ("F.avg_pool3d(x, (2, 3, 3), 2, (1, 1, 0), ceil_mode=True, count_include_pad=False)",
                        "torch.randn(1, 2, 6, 7, 9)"),
    "3d_divisor_override": ("F.avg_pool3d(x, 2, divisor_override=3)", "torch.randn(1, 2, 5, 6, 7)"),
}

ADAPTIVE = {
    "avg_2d_ragged": ("F.adaptive_avg_pool2d(x, (4, 5))", "torch.randn(2, 3, 9, 11)"),
    "avg_2d_even": ("F.adaptive_avg_pool2d(x, (3, 2))", "torch.randn(2, 3, 9, 10)"),
    "avg_2d_larger_than_input": ("F.adaptive_avg_pool2d(x, (7, 5))", "torch.randn(2, 3, 4, 3)"),
    "avg_2d_one_dim_global": ("F.adaptive_avg_pool2d(x, (1, 3))", "torch.randn(2, 3, 9, 7)"),
    "avg_1d": ("F.adaptive_avg_pool1d(x, 4)", "torch.randn(2, 3, 11)"),
    "avg_3d": ("F.adaptive_avg_pool3d(x, (2, 4, 3))", "torch.randn(2, 3, 5, 9, 7)"),
    "avg_3d_global": ("F.adaptive_avg_pool3d(x, 1)", "torch.randn(2, 3, 5, 4, 3)"),
    "max_2d": ("F.adaptive_max_pool2d(x, (4, 5), return_indices=True)", "torch.randn(2, 3, 9, 11)"),
    "max_2d_special": ("F.adaptive_max_pool2d(x, (3, 4), return_indices=True)", SPECIAL_2D),
    "max_1d": ("F.adaptive_max_pool1d(x, 5, return_indices=True)", "torch.randn(2, 3, 12)"),
    "max_3d": ("F.adaptive_max_pool3d(x, (2, 4, 5), return_indices=True)", "torch.randn(2, 3, 5, 9, 11)"),
    "max_3d_special": ("F.adaptive_max_pool3d(x, (3, 2, 3), return_indices=True)", SPECIAL_3D),
}


@pytest.mark.parametrize("name", sorted(MAX_POOLS))
def test_max_pool(name: str) -> None:
    check(spec(*MAX_POOLS[name]))


@pytest.mark.parametrize("name", sorted(AVG_POOLS))
def test_avg_pool(name: str) -> None:
    check(spec(*AVG_POOLS[name]))


@pytest.mark.parametrize("name", sorted(ADAPTIVE))
def test_adaptive_pool(name: str) -> None:
    check(spec(*ADAPTIVE[name]))


@pytest.mark.parametrize("forward", [
    "F.max_pool2d(x, 3, 2, 1, return_indices=True)",
    "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)",
    "F.adaptive_avg_pool2d(x, (4, 3))",
    "F.adaptive_max_pool2d(x, (4, 3), return_indices=True)",
    "F.max_pool1d(x.flatten(2), 3, 2, return_indices=True)",
])
def test_pool_float16(forward: str) -> None:
    check(spec(forward, "torch.randn(2, 3, 9, 11).half()"), atol=1e-3, rtol=1e-3)


FUSED = {
    # bn-like affine and ReLU inlined into the pool's window loop
    "pool_of_pointwise": "F.max_pool2d(torch.relu(x * 1.5 - 0.25), 2)",
    # overlapping windows over a costly input: stored first
    "pool_of_costly_input": "F.avg_pool2d(torch.tanh(x) * torch.sigmoid(x) + x.exp(), 3, 1, 1)",
    "pool_of_pool": "F.max_pool2d(F.avg_pool2d(x, 3, 1, 1), 3, 2, 1)",
    "reduction_of_pool": "F.max_pool2d(x, 2).sum(dim=(2, 3))",
    "indices_only": "F.max_pool2d(x, 3, 2, 1, return_indices=True)[1]",
    "pool_read_twice": "(lambda p: p * 2 + p.mean(dim=1, keepdim=True))(F.avg_pool2d(x, 2))",
    "adaptive_then_linear_shape": "torch.flatten(F.adaptive_avg_pool2d(torch.relu(x), (2, 3)), 1) * 3",
}


@pytest.mark.parametrize("name", sorted(FUSED))
def test_pool_with_neighbours(name: str) -> None:
    check(spec(FUSED[name], "torch.randn(2, 4, 10, 11)"))


# Few outputs over large windows (a global or adaptive pool of a large map): reduced as rows.
LARGE = {
    "adaptive_max": ("F.adaptive_max_pool2d(x, (1, 2))", SPECIAL_2D.replace("(2, 3, 9, 11)", "(2, 3, 16, 24)")),
    "adaptive_max_3d": ("F.adaptive_max_pool3d(x, (1, 2, 1))", SPECIAL_3D.replace("(2, 2, 5, 6, 7)", "(2, 2, 4, 6, 8)")),
    "adaptive_avg": ("F.adaptive_avg_pool2d(x, (2, 1))", "torch.randn(3, 5, 20, 18)"),
    "avg_big_kernel": ("F.avg_pool2d(x, 9, stride=4)", "torch.randn(2, 3, 21, 25)"),
    "avg_override": ("F.avg_pool2d(x, (8, 10), divisor_override=7)", "torch.randn(2, 3, 16, 20)"),
    "max_big_kernel_dilated": ("F.max_pool2d(x, 8, stride=3, dilation=2)", SPECIAL_2D.replace("(2, 3, 9, 11)", "(2, 3, 25, 27)")),
    "adaptive_max_fp16": ("F.adaptive_max_pool2d(x, 1)", "torch.randn(4, 6, 12, 12).half()"),
    "adaptive_avg_bf16": ("F.adaptive_avg_pool2d(x, 1) * 3", "torch.randn(4, 6, 12, 12).bfloat16()"),
}


@pytest.mark.parametrize("name", sorted(LARGE))
def test_large_windows_reduce_as_rows(name: str) -> None:
    forward, inputs = LARGE[name]
    half = "half()" in inputs or "bfloat16()" in inputs
    code = check(spec(forward, inputs), atol=1e-2 if half else 1e-5, rtol=1e-2 if half else 1e-5)
    assert "for kk" not in code and "rlin" in code, code


def test_large_windows_reaching_outside_the_input_are_walked() -> None:
    """Padding gives windows of different extents: walked."""
    code = check(spec("F.max_pool2d(x, 9, stride=4, padding=4)", "torch.randn(2, 3, 21, 25)"))
    assert "for kk" in code and "in range(81)" in code  # 81 offsets: a loop


@pytest.mark.parametrize(("forward", "inputs"), [
    ("F.adaptive_avg_pool2d(x, (3, 1))", "torch.randn(2, 3, 20, 70)"),
    ("F.adaptive_max_pool1d(x, 7)", "torch.randn(2, 3, 100)"),
    ("F.adaptive_avg_pool1d(x, 6)", "torch.randn(3, 2, 125).half()"),
])
def test_ragged_adaptive_windows_far_apart_are_rows_with_their_tails_masked(forward: str, inputs: str) -> None:
    """Adaptive windows of different lengths (100 into 7: 15 or 16 elements), far apart: a
    warp reads each window contiguously as a row, positions past a window's end read the
    reduction's identity, and the pooled value is stored by the reduction's own kernel."""
    half = "half()" in inputs
    code = check(spec(forward, inputs), atol=1e-2 if half else 1e-5, rtol=1e-2 if half else 1e-5)
    assert "for kk" not in code and "rlin" in code, code
    assert "_pointwise" not in code.split("class ModelNew")[1], code


def test_small_windows_are_unrolled() -> None:
    """A 3x3 window with padding and ceil mode: its nine offsets are constants of an
    unrolled walk (independent loads in flight together), with the same results."""
    code = check(spec("F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
                      "torch.randn(2, 5, 11, 13).half()"), atol=1e-2, rtol=1e-2)
    assert "in tl.static_range(9):" in code, code
