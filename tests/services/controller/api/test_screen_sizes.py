"""Screening sizes derived at submit for specs written at GPU sizes without ``cpu_shapes``."""

from __future__ import annotations

import pytest

from kevolve.config import REPO_ROOT
from kevolve.exec import sandbox
from services.controller.api import specprobe
from services.controller.api.screen_sizes import BUDGET, FLOOR, LIMIT

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_status()[0] is None, reason="bubblewrap cannot run here")
HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
MLP = REPO_ROOT / "tests" / "fixtures" / "specs" / "gpu_sized" / "mlp_block.py"


@needs_bwrap
def test_gpu_sizes_shrink_by_one_factor_into_the_budget_and_derived_constants_follow() -> None:
    result = specprobe.probe(MLP.read_text(), {}, timeout_s=60)
    sizes = result.screening_sizes
    assert set(sizes) == {"batch_size", "hidden"}      # ffn = hidden * 4 follows hidden
    assert 2048 // sizes["hidden"] == 4096 // sizes["batch_size"] > 1
    hidden, ffn, batch = sizes["hidden"], 4 * sizes["hidden"], sizes["batch_size"]
    assert batch * hidden + 2 * hidden * ffn + ffn + 3 * hidden <= BUDGET


@needs_bwrap
def test_heads_stay_and_the_model_dimension_stays_divisible_by_them() -> None:
    source = HEAD + (
        "batch = 64\ntokens = 1024\nd_model = 768\nheads = 12\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)\n"
        "    def forward(self, x):\n        return self.attn(x, x, x, need_weights=False)[0]\n"
        "def get_inputs():\n    return [torch.randn(batch, tokens, d_model)]\n"
        "def get_init_inputs():\n    return []\n")
    sizes = specprobe.probe(source, {}, timeout_s=60).screening_sizes
    assert "heads" not in sizes and sizes["d_model"] % 12 == 0 and sizes["tokens"] < 1024


@needs_bwrap
def test_sizes_that_break_the_spec_give_way_to_larger_ones() -> None:
    # Three stride-2 convolutions without padding: images below 15 pixels fail.
    source = HEAD + (
        "batch_size = 256\nchannels = 64\nimage = 512\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.body = nn.Sequential(*[nn.Conv2d(3 if i == 0 else channels, channels, 3, stride=2)"
        " for i in range(3)])\n"
        "    def forward(self, x):\n        return self.body(x).mean(dim=(2, 3))\n"
        "def get_inputs():\n    return [torch.randn(batch_size, 3, image, image)]\n"
        "def get_init_inputs():\n    return []\n")
    sizes = specprobe.probe(source, {}, timeout_s=60).screening_sizes
    assert sizes["image"] >= 15 and sizes["batch_size"] >= FLOOR
    assert sizes["image"] < 512


@needs_bwrap
def test_small_specs_and_specs_with_their_own_screening_sizes_keep_theirs() -> None:
    small = HEAD + ("n = 64\nclass Model(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
                    "def get_inputs():\n    return [torch.randn(n, n)]\ndef get_init_inputs():\n    return []\n")
    assert specprobe.probe(small, {}, timeout_s=60).screening_sizes == {}
    softmax = (REPO_ROOT / "examples" / "softmax.py").read_text()   # declares cpu_shapes
    assert specprobe.probe(softmax, {}, timeout_s=60).screening_sizes == {}


@needs_bwrap
def test_computed_sizes_shrink_and_large_outputs_count() -> None:
    # Small inputs, a 2^27-element result: the output decides the screening sizes.
    outer = HEAD + ("M = 16384\nN = 4096 * 2\nclass Model(nn.Module):\n"
                    "    def forward(self, u, v):\n        return torch.outer(u, v)\n"
                    "def get_inputs():\n    return [torch.randn(M), torch.randn(N)]\n"
                    "def get_init_inputs():\n    return []\n")
    sizes = specprobe.probe(outer, {}, timeout_s=60).screening_sizes
    assert set(sizes) == {"M", "N"} and sizes["M"] * sizes["N"] <= BUDGET
    vector = HEAD + ("size = 64 * 1024 * 1024\nclass Model(nn.Module):\n"
                     "    def forward(self, x):\n        return torch.rsqrt(x)\n"
                     "def get_inputs():\n    return [torch.rand(size) + 0.01]\n"
                     "def get_init_inputs():\n    return []\n")
    sizes = specprobe.probe(vector, {}, timeout_s=60).screening_sizes
    assert 0 < 2 * sizes["size"] <= BUDGET


@needs_bwrap
def test_tuple_shapes_shrink_and_a_size_tied_to_a_group_count_keeps_a_multiple() -> None:
    # GroupNorm(32, 320): 320 and 160 divide into 32 groups, 80 does not; the image is a tuple.
    source = HEAD + ("batch = 16\nchannels = 320\nimage = (64, 64)\nclass Model(nn.Module):\n"
                     "    def __init__(self):\n        super().__init__()\n"
                     "        self.norm = nn.GroupNorm(32, channels)\n"
                     "    def forward(self, h):\n        return self.norm(h)\n"
                     "def get_inputs():\n    return [torch.randn(batch, channels, *image)]\n"
                     "def get_init_inputs():\n    return []\n")
    sizes = specprobe.probe(source, {}, timeout_s=60).screening_sizes
    assert sizes["channels"] % 32 == 0 and sizes["channels"] < 320
    assert sizes["image[0]"] < 64 and sizes["image[1]"] < 64
    # Everything else at its smallest: the loosened size may take the spec past the budget,
    # never past what is run here.
    assert sizes["batch"] * sizes["channels"] * sizes["image[0]"] * sizes["image[1]"] * 2 <= LIMIT


@needs_bwrap
def test_a_network_whose_layer_widths_are_literals_still_shrinks_what_its_constants_set() -> None:
    # The classifier's 8192 x 2048 weights are written as literals and its input width is
    # tied to the image size: inputs + state never fit the budget, so the batch and the
    # widths the constants set go below the usual floor; the image keeps its size.
    source = HEAD + ("batch_size = 64\nimage = 32\nwidths = [64, 128, 512]\nnum_classes = 100\n"
                     "class Model(nn.Module):\n"
                     "    def __init__(self, num_classes):\n        super().__init__()\n"
                     "        layers, c = [], 3\n"
                     "        for w in widths:\n"
                     "            layers += [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]\n"
                     "            c = w\n"
                     "        self.features = nn.Sequential(*layers)\n"
                     "        self.classifier = nn.Sequential(nn.Linear(512 * 4 * 4, 2048), nn.ReLU(),\n"
                     "                                        nn.Linear(2048, num_classes))\n"
                     "    def forward(self, x):\n        return self.classifier(self.features(x).flatten(1))\n"
                     "def get_inputs():\n    return [torch.randn(batch_size, 3, image, image)]\n"
                     "def get_init_inputs():\n    return [num_classes]\n")
    sizes = specprobe.probe(source, {}, timeout_s=60).screening_sizes
    assert sizes["image"] == 32 and sizes["widths[2]"] == 512
    assert sizes["batch_size"] < FLOOR and sizes["widths[0]"] < 64 and sizes["num_classes"] < 100
