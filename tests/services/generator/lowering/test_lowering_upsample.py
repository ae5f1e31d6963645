"""The general lowering on resampling: nearest, nearest-exact, linear, bilinear, bicubic
and trilinear upsampling by sizes and by scale factors (integer, fractional, below 1), both
``align_corners`` settings, float32 and float16, and ``nn.Upsample`` modules whose scale is
a float attribute.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lowering_check import check

from services.generator.lowering.ops_upsample import linear_axis, nearest_axis, nearest_table

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(forward: str, inputs: str, init: str = "") -> str:
    body = f"        {init}\n" if init else ""
    return (HEAD + "\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + body
            + f"\n    def forward(self, x):\n        return {forward}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n"
            "def get_init_inputs():\n    return []\n")


CASES = {
    "nearest_2d_scale2": ("F.interpolate(x, scale_factor=2, mode='nearest')", "torch.randn(2, 3, 5, 7)"),
    "nearest_2d_size": ("F.interpolate(x, size=(7, 13), mode='nearest')", "torch.randn(2, 3, 5, 7)"),
    "nearest_2d_fractional": ("F.interpolate(x, scale_factor=(1.7, 2.3), mode='nearest')",
                              "torch.randn(2, 3, 5, 7)"),
    "nearest_2d_downscale": ("F.interpolate(x, scale_factor=0.6, mode='nearest')", "torch.randn(2, 3, 11, 9)"),
    "nearest_exact_2d": ("F.interpolate(x, scale_factor=1.7, mode='nearest-exact')", "torch.randn(2, 3, 5, 7)"),
    "nearest_exact_2d_size": ("F.interpolate(x, size=(4, 11), mode='nearest-exact')", "torch.randn(2, 3, 7, 5)"),
    "nearest_1d": ("F.interpolate(x, scale_factor=3, mode='nearest')", "torch.randn(2, 3, 7)"),
    "nearest_exact_1d": ("F.interpolate(x, size=12, mode='nearest-exact')", "torch.randn(2, 3, 7)"),
    "nearest_3d": ("F.interpolate(x, scale_factor=(2, 1.5, 3), mode='nearest')", "torch.randn(1, 2, 3, 5, 4)"),
    "nearest_exact_3d": ("F.interpolate(x, size=(5, 7, 3), mode='nearest-exact')", "torch.randn(1, 2, 3, 5, 4)"),
    "bilinear_scale2": ("F.interpolate(x, scale_factor=2, mode='bilinear')", "torch.randn(2, 3, 5, 7)"),
    "bilinear_align_size": ("F.interpolate(x, size=(7, 13), mode='bilinear', align_corners=True)",
                            "torch.randn(2, 3, 5, 7)"),
    "bilinear_fractional": ("F.interpolate(x, scale_factor=(1.3, 2.7), mode='bilinear')",
                            "torch.randn(2, 3, 5, 7)"),
    "bilinear_recompute": ("F.interpolate(x, scale_factor=1.7, mode='bilinear', recompute_scale_factor=True)",
                           "torch.randn(2, 3, 5, 7)"),
    "bilinear_downscale_align": ("F.interpolate(x, size=(4, 3), mode='bilinear', align_corners=True)",
                                 "torch.randn(2, 3, 9, 8)"),
    "bilinear_one_axis_kept": ("F.interpolate(x, size=(5, 12), mode='bilinear')", "torch.randn(2, 3, 5, 7)"),
    "bilinear_to_single_pixel": ("F.interpolate(x, size=(1, 3), mode='bilinear', align_corners=True)",
                                 "torch.randn(2, 3, 5, 7)"),
    "linear_1d": ("F.interpolate(x, scale_factor=2.5, mode='linear')", "torch.randn(2, 3, 7)"),
    "linear_1d_align": ("F.interpolate(x, size=11, mode='linear', align_corners=True)", "torch.randn(2, 3, 7)"),
    "trilinear": ("F.interpolate(x, scale_factor=2, mode='trilinear')", "torch.randn(1, 2, 3, 4, 5)"),
    "trilinear_align_size": ("F.interpolate(x, size=(5, 3, 7), mode='trilinear', align_corners=True)",
                             "torch.randn(1, 2, 3, 4, 5)"),
    "bicubic_scale2": ("F.interpolate(x, scale_factor=2, mode='bicubic')", "torch.randn(2, 3, 5, 7)"),
    "bicubic_align_size": ("F.interpolate(x, size=(7, 13), mode='bicubic', align_corners=True)",
                           "torch.randn(2, 3, 5, 7)"),
    "bicubic_down_and_up": ("F.interpolate(x, scale_factor=(0.6, 1.7), mode='bicubic')", "torch.randn(2, 3, 11, 7)"),
    "bicubic_one_axis_kept": ("F.interpolate(x, size=(5, 12), mode='bicubic')", "torch.randn(2, 3, 5, 7)"),
    "upsample_of_pointwise": ("F.interpolate(torch.relu(x) + 1.0, scale_factor=2, mode='bilinear')",
                              "torch.randn(2, 3, 5, 7)"),
    "pool_of_upsample": ("F.max_pool2d(F.interpolate(x, scale_factor=3, mode='nearest'), 2)",
                         "torch.randn(2, 3, 5, 7)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_resample(name: str) -> None:
    check(spec(*CASES[name]))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_upsample_module(mode: str) -> None:
    # nn.Upsample keeps its scale as a float attribute: the graph's sizes were captured for it.
    check(spec("self.up(x)", "torch.randn(2, 3, 5, 7)", f"self.up = nn.Upsample(scale_factor=2.0, mode='{mode}')"))


@pytest.mark.parametrize("forward", ["F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)",
                                     "F.interpolate(x, size=(8, 9), mode='nearest')",
                                     "F.interpolate(x, scale_factor=2, mode='bicubic')"])
def test_resample_float16(forward: str) -> None:
    check(spec(forward, "torch.randn(2, 3, 5, 7).half()"), atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("exact", [False, True])
def test_nearest_table_is_pytorchs(exact: bool) -> None:
    """The source indices the lowering computes are those PyTorch uses, size by size."""
    mode = "nearest-exact" if exact else "nearest"
    for size in range(1, 14):
        for out in range(1, 30):
            x = torch.arange(size, dtype=torch.float32).view(1, 1, size)
            want = torch.nn.functional.interpolate(x, size=out, mode=mode).view(-1).long().numpy()
            assert np.array_equal(nearest_table(nearest_axis(size, out, None), exact), want), (size, out)
        for factor in (0.5, 0.7, 1.5, 1.7, 2.0, 2.5, 3.0):
            if int(size * factor) < 1:
                continue
            x = torch.arange(size, dtype=torch.float32).view(1, 1, size)
            got = torch.nn.functional.interpolate(x, scale_factor=factor, mode=mode)
            table = nearest_table(nearest_axis(size, got.shape[-1], factor), exact)
            assert np.array_equal(table, got.view(-1).long().numpy()), (size, factor)


def test_linear_scale_with_align_corners_at_one_output() -> None:
    assert linear_axis(7, 1, None, True).scale == 0.0
    assert linear_axis(5, 9, None, True).scale == 0.5


def test_convolution_reads_a_nearest_upsample_in_place() -> None:
    # An integer-ratio nearest upsample is a view: the convolution gathers through it, and
    # the larger upsampled tensor is never stored (the one kernel reading the input is the
    # convolution's; the other reorders the weight tap by tap).
    code = check(spec("self.conv(F.interpolate(x, scale_factor=2, mode='nearest'))", "torch.randn(2, 16, 5, 7)",
                      "self.conv = nn.Conv2d(16, 16, 3, padding=1)"))
    wrapper = code.split("class ModelNew")[1]
    launches = [line.strip() for line in wrapper.splitlines() if line.strip().startswith("_k")]
    readers = [line for line in launches if "(in0," in line.replace(" ", "")]
    assert readers and all("_conv" in line for line in readers), launches  # GPU and interpreter forms
