"""The general lowering on convolutions: every option of aten.convolution (rank 1-3, stride,
padding, dilation, groups, bias, transposed with output padding), both kernel forms (the
implicit GEMM and the per-output reduction), 16-bit inputs, and small networks.

Sizes are odd so that no block divides them, and small so that the interpreter runs each
case in about a second.
"""

from __future__ import annotations

import re

import pytest
from lowering_check import check, generate

from services.generator.lowering.tunables import Tunables

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(init: str, forward: str, inputs: str) -> str:
    """A spec: ``init`` lines in __init__, ``forward`` lines in forward(self, x, *rest),
    ``inputs`` the elements of get_inputs()'s list."""
    body = "".join(f"        {line}\n" for line in init.strip().splitlines()) or "        pass\n"
    fwd = "".join(f"        {line}\n" for line in forward.strip().splitlines())
    return (HEAD + "\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + body
            + f"\n    def forward(self, x, *rest):\n{fwd}\n\ndef get_inputs():\n    return [{inputs}]\n\n"
            "def get_init_inputs():\n    return []\n")


# name: (layer, input shape). The comment says which kernel form the sizes select.
LAYERS = {
    "conv1d_small_k": ("nn.Conv1d(4, 16, 3)", (2, 4, 17)),  # reduction: K = 12
    "conv1d_stride_pad_dilation": ("nn.Conv1d(8, 24, 5, stride=2, padding=3, dilation=2)", (2, 8, 23)),  # GEMM
    "conv1d_unbatched": ("nn.Conv1d(6, 20, 3, padding=1)", (6, 15)),
    "conv2d_pointwise_1x1": ("nn.Conv2d(16, 32, 1)", (2, 16, 7, 9)),
    "conv2d_rgb_stem": ("nn.Conv2d(3, 8, 3, padding=1)", (2, 3, 11, 13)),
    "conv2d_3x3_no_bias": ("nn.Conv2d(16, 24, 3, padding=1, bias=False)", (2, 16, 9, 11)),
    "conv2d_rect_stride_dilation": ("nn.Conv2d(8, 20, (3, 5), stride=(2, 3), padding=(2, 1), dilation=(1, 2))",
                                    (2, 8, 13, 17)),
    "conv2d_same_padding": ("nn.Conv2d(4, 16, 3, padding='same', dilation=2)", (1, 4, 9, 10)),
    "conv2d_groups_gemm": ("nn.Conv2d(32, 64, 3, padding=1, groups=2)", (1, 32, 7, 9)),
    "conv2d_groups_reduction": ("nn.Conv2d(12, 18, 3, groups=3)", (2, 12, 9, 8)),
    "conv2d_depthwise": ("nn.Conv2d(16, 16, 3, padding=1, groups=16)", (2, 16, 9, 11)),
    "conv2d_depthwise_multiplier": ("nn.Conv2d(8, 16, 5, stride=2, padding=2, groups=8)", (2, 8, 11, 9)),
    "conv2d_large_stride": ("nn.Conv2d(3, 16, 4, stride=4)", (2, 3, 17, 19)),  # patchify
    "conv3d_gemm": ("nn.Conv3d(4, 16, 3, padding=1)", (2, 4, 5, 6, 7)),
    "conv3d_grouped_strided": ("nn.Conv3d(6, 6, (2, 3, 3), stride=(1, 2, 2), groups=3)", (1, 6, 4, 7, 9)),
    "convT1d": ("nn.ConvTranspose1d(8, 16, 4, stride=2, padding=1)", (2, 8, 9)),
    "convT2d_output_padding": ("nn.ConvTranspose2d(16, 32, 3, stride=2, padding=1, output_padding=1)",
                               (2, 16, 5, 7)),
    "convT2d_groups_dilation": ("nn.ConvTranspose2d(6, 4, 3, stride=3, padding=2, output_padding=1, groups=2, "
                                "dilation=2)", (2, 6, 5, 4)),
    "convT2d_depthwise": ("nn.ConvTranspose2d(8, 8, 3, stride=2, groups=8, bias=False)", (2, 8, 5, 6)),
    "convT2d_stride1": ("nn.ConvTranspose2d(16, 16, 3, padding=1)", (1, 16, 6, 7)),
    "convT3d": ("nn.ConvTranspose3d(4, 16, 3, stride=2, padding=1, output_padding=(0, 1, 1))", (1, 4, 3, 4, 5)),
    "convT2d_rect_stride_groups": ("nn.ConvTranspose2d(32, 64, (3, 5), stride=(1, 3), padding=(0, 2), "
                                   "output_padding=(0, 1), groups=2)", (1, 32, 4, 5)),
    "convT2d_kernel_below_stride": ("nn.ConvTranspose2d(16, 16, 2, stride=3)", (1, 16, 4, 5)),  # phases with no tap
    "convT2d_large_padding": ("nn.ConvTranspose2d(16, 16, 5, stride=2, padding=3, output_padding=1)", (1, 16, 5, 6)),
    "convT2d_float64": ("nn.ConvTranspose2d(16, 16, 3, stride=2).double()", (1, 16, 4, 5)),
    "convT3d_groups_4_per_group": ("nn.ConvTranspose3d(8, 8, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2), "
                                   "output_padding=(0, 1, 1), groups=2)", (1, 8, 3, 4, 5)),
}


def _shape(shape: tuple[int, ...]) -> str:
    return ", ".join(str(s) for s in shape)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_convolution_layer(name: str) -> None:
    layer, shape = LAYERS[name]
    dtype = ", dtype=torch.float64" if "double" in layer else ""
    check(spec(f"self.layer = {layer}", "return self.layer(x)", f"torch.randn({_shape(shape)}{dtype})"))


# Every phased layer in the reduction form (its taps are those of each output's phase); the
# walk, whose interpreted loop is slow, on a plain layer and a phased one with tapless phases.
DIRECT_FORMS = [(name, "reduce") for name in ("conv2d_groups_reduction", "convT2d_groups_dilation",
                                              "conv3d_grouped_strided", "convT3d_groups_4_per_group",
                                              "convT2d_kernel_below_stride", "convT2d_large_padding", "convT3d",
                                              "convT2d_float64")]
DIRECT_FORMS += [(name, "walk") for name in ("conv2d_depthwise_multiplier", "convT2d_kernel_below_stride")]


@pytest.mark.parametrize(("name", "form"), DIRECT_FORMS)
def test_direct_convolutions_keep_their_gpu_form(name: str, form: str) -> None:
    """The direct forms on the GPU: each lane walking one output's taps (unrolled when they are
    few), or blocks of outputs summing blocks of taps; a strided transposed convolution visits
    only the taps of each output's phase. Under the interpreter, from 4 channels per group,
    the GEMM form runs instead. The GPU's form computes the same."""
    layer, shape = LAYERS[name]
    dtype = ", dtype=torch.float64" if "double" in layer else ""
    code = check(spec(f"self.layer = {layer}", "return self.layer(x)", f"torch.randn({_shape(shape)}{dtype})"),
                 form="gpu", tuned=Tunables(conv_form=form))
    launch = next(line for line in code.splitlines() if "_conv[" in line)
    assert bool(re.search(r"RBLOCK=1( if gpu|,)", launch)) == (form == "walk"), launch
    if form == "walk":
        taps = int(re.search(r"for roff in (?:tl\.static_range|range)\(0, (\d+)", code).group(1))
        assert ("tl.static_range(" in code) == (taps <= 64), taps


@pytest.mark.parametrize(("layer", "shape", "form"), [
    # Few output channels over many taps: one GEMM tile covers all of them
    ("nn.Conv2d(64, 8, 3, padding=1, groups=2)", (2, 64, 6, 7), "gemm"),
    ("nn.ConvTranspose1d(32, 4, 5, stride=1)", (2, 32, 9), "gemm"),
    # ... unless phased: each phase's GEMM would gather the whole input again (a DCGAN's RGB layer)
    ("nn.ConvTranspose2d(32, 3, 4, 2, 1, bias=False)", (2, 32, 5, 6), "reduce"),
    # Depthwise: a GEMM tile would be almost all padding; at stride 1 over few taps each lane
    # walks an output's taps, else blocks of outputs sum blocks of taps
    ("nn.Conv2d(16, 16, 3, padding=1, groups=16)", (2, 16, 6, 7), "walk"),
    ("nn.Conv3d(8, 8, 3, padding=2, dilation=2, groups=8)", (1, 8, 5, 6, 7), "walk"),
    ("nn.Conv2d(16, 32, 5, stride=2, padding=2, groups=16)", (2, 16, 9, 9), "reduce"),
    ("nn.Conv2d(2, 1, 9, padding=4)", (2, 2, 9, 9), "reduce"),
])
def test_the_form_follows_the_channels_and_taps_a_gemm_tile_would_find(layer: str, shape: tuple[int, ...],
                                                                        form: str) -> None:
    code = check(spec(f"self.layer = {layer}", "return self.layer(x)", f"torch.randn({_shape(shape)})"), form="gpu")
    launch = next(line for line in code.splitlines() if "_conv" in line and "](" in line)
    found = "gemm" if "tl.dot(" in code else "walk" if re.search(r"RBLOCK=1( if gpu|,)", launch) else "reduce"
    assert found == form, launch


@pytest.mark.parametrize("name", ["conv2d_3x3_no_bias", "conv2d_depthwise", "convT2d_output_padding",
                                  "conv1d_small_k"])
def test_convolution_layer_float16(name: str) -> None:
    layer, shape = LAYERS[name]
    check(spec(f"self.layer = {layer}.half()", "return self.layer(x)", f"torch.randn({_shape(shape)}).half()"),
          atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("name", ["conv2d_3x3_no_bias", "conv2d_depthwise"])
def test_convolution_layer_bfloat16(name: str) -> None:
    layer, shape = LAYERS[name]
    check(spec(f"self.layer = {layer}.bfloat16()", "return self.layer(x)",
               f"torch.randn({_shape(shape)}).bfloat16()"), atol=3e-2, rtol=3e-2)


def test_padding_reads_zero_from_a_computed_input() -> None:
    # x + 1 stays lazy inside the convolution's loads: its padding must still be 0, not 1.
    for layer in ("nn.Conv2d(16, 32, 3, padding=2)", "nn.Conv2d(4, 4, 3, padding=1, groups=4)"):
        channels = 16 if "16" in layer else 4
        check(spec(f"self.layer = {layer}", "return self.layer(x + 1.0)", f"torch.randn(2, {channels}, 7, 9)"))


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("conv", ["nn.Conv2d(6, 6, 3, padding=1, groups=6, bias=False)", "nn.Conv2d(6, 5, 3, padding=1)"])
def test_a_padded_convolution_reads_a_channel_shuffle_in_place(conv: str, form: str) -> None:
    """A ShuffleNet channel shuffle (view, transpose, view) read by a padded convolution,
    depthwise and dense: the input position of a padding tap (``-1 + kh + oh``) is negative
    on the border, and the shuffle's floor and mod of it round down as PyTorch's indexing
    means, not toward zero as Triton's integer division does."""
    forward = """b, c, h, w = x.shape
out = x.view(b, 3, c // 3, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)
return self.conv(out)"""
    check(spec(f"self.conv = {conv}", forward, "torch.randn(2, 6, 10, 9)"), form=form, trials=1)


def test_functional_convolution_with_weights_as_inputs() -> None:
    check(spec("", "return F.conv2d(x, rest[0], rest[1], stride=2, padding=1) * 0.5",
               "torch.randn(2, 8, 9, 11), torch.randn(16, 8, 3, 3), torch.randn(16)"))
    check(spec("", "return F.conv_transpose1d(x, rest[0].t().unsqueeze(-1).expand(-1, -1, 3), stride=2)",
               "torch.randn(2, 8, 9), torch.randn(16, 8)"))


BN_INIT = """
for m in self.modules():
    if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
        nn.init.uniform_(m.running_mean, -0.5, 0.5)
        nn.init.uniform_(m.running_var, 0.5, 1.5)
        nn.init.uniform_(m.weight, 0.5, 1.5)
        nn.init.uniform_(m.bias, -0.5, 0.5)
"""

NETWORKS = {
    "conv_bn_relu_pool": ("""
self.features = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
self.head = nn.Linear(32, 10)
""", "return self.head(torch.flatten(self.features(x), 1))", "torch.randn(2, 3, 15, 13)"),
    "depthwise_separable": ("""
self.dw = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False)
self.bn1 = nn.BatchNorm2d(16)
self.pw = nn.Conv2d(16, 32, 1, bias=False)
self.bn2 = nn.BatchNorm2d(32)
""", "return F.relu6(self.bn2(self.pw(F.relu6(self.bn1(self.dw(x))))))", "torch.randn(2, 16, 11, 9)"),
    "unet_down_up": ("""
self.enc = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU())
self.mid = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
self.dec = nn.Conv2d(32, 16, 3, padding=1)
""", """
skip = self.enc(x)
y = self.up(self.mid(F.max_pool2d(skip, 2)))
return torch.relu(self.dec(torch.cat([y, skip], dim=1)))
""", "torch.randn(2, 4, 10, 14)"),
    "resnet_basic_block": ("""
self.conv1 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
self.bn1 = nn.BatchNorm2d(32)
self.conv2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
self.bn2 = nn.BatchNorm2d(32)
self.down = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
""", """
y = torch.relu(self.bn1(self.conv1(x)))
y = self.bn2(self.conv2(y))
return torch.relu(y + self.down(x))
""", "torch.randn(2, 16, 9, 11)"),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_small_network(name: str) -> None:
    init, forward, inputs = NETWORKS[name]
    check(spec(init + BN_INIT, forward, inputs), atol=2e-4, rtol=2e-4)


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_pointwise_work_after_a_convolution_runs_in_its_kernel(form: str) -> None:
    """Batch norm (eval mode), a residual add and ReLU after an implicit-GEMM convolution are
    computed before its one store: one convolution kernel, no stored convolution output."""
    init = "self.conv = nn.Conv2d(16, 32, 3, padding=1)\nself.bn = nn.BatchNorm2d(32)"
    code = check(spec(init, "return torch.relu(self.bn(self.conv(x)) + rest[0])",
                      "torch.randn(2, 16, 9, 11), torch.randn(2, 32, 9, 11)"), form=form)
    assert code.count("_conv_epilogue") >= 2 and "_pointwise(" not in code.split("class ModelNew")[1]


# GEMM convolutions whose channels per group fill whole K steps (16 | channels): plain,
# grouped, 3-d, transposed with output padding, phased with rectangular strides and groups.
TAP_MAJOR = ["conv2d_3x3_no_bias", "conv2d_groups_gemm", "convT2d_output_padding", "convT2d_rect_stride_groups",
             "convT2d_large_padding", "convT2d_float64"]


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
@pytest.mark.parametrize("name", TAP_MAJOR)
def test_gemm_convolutions_walk_k_tap_by_tap(name: str, form: str) -> None:
    """K walked tap by tap: each step reads one kernel tap's channels, so the input offsets
    and padding bounds are computed once per step (``kt``), and the weight, reordered once
    per call to [groups, *kernel, channels, out channels], is read in contiguous tiles. The
    interpreter walks K whole in the same order."""
    layer, shape = LAYERS[name]
    dtype = ", dtype=torch.float64" if "double" in layer else ""
    code = check(spec(f"self.layer = {layer}", "return self.layer(x)", f"torch.randn({_shape(shape)}{dtype})"),
                 form=form)
    assert "kt = k0 // 16" in code, code
    assert "tl.where(" not in code.split("kt = k0 //")[1].split("tl.dot")[0] or "float64" in name, code


def test_the_channel_major_k_order_stays_a_search_choice() -> None:
    layer, shape = LAYERS["convT2d_large_padding"]
    code = check(spec(f"self.layer = {layer}", "return self.layer(x)", f"torch.randn({_shape(shape)})"),
                 form="gpu", tuned=Tunables(conv_k_order="channels"))
    assert "kt = k0" not in code


@pytest.mark.parametrize("form", ["reduce", "walk"])
def test_a_large_convolution_stays_a_gemm_whatever_the_search_asks(form: str) -> None:
    """32 output channels per group over 576 taps: a direct form would only spend one of the
    search's candidates (25x slower on a GPU), so the search's choice of one changes nothing."""
    source = spec("self.layer = nn.ConvTranspose2d(64, 32, 3, stride=2, padding=1, output_padding=1)",
                  "return self.layer(x)", "torch.randn(1, 64, 5, 6)")
    assert generate(source, tuned=Tunables(conv_form=form)) == generate(source)
