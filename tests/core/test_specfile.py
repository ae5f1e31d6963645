"""The spec format read without running it, and size overrides applied before it runs."""

from __future__ import annotations

import pytest

from kevolve.specfile import SpecError, load_module, outline

SPEC = """import torch
batch = 4
height = width = 128
rows, cols = 32, 48
shape = (3, 64)
ffn = batch * 4

class Model:
    pass

def get_inputs():
    return [torch.zeros(batch, height, width), torch.zeros(rows, cols), torch.zeros(ffn)]

def get_init_inputs():
    return []
"""


def test_chained_and_unpacked_integer_constants_are_sizes() -> None:
    assert outline(SPEC).sizes == {"batch": 4, "height": 128, "width": 128, "rows": 32, "cols": 48,
                                   "shape[0]": 3, "shape[1]": 64}


def test_each_name_of_a_chained_or_unpacked_assignment_takes_its_own_override() -> None:
    module = load_module(SPEC, "spec_sizes_overridden", {"height": 8, "cols": 6, "batch": 2})
    shapes = [tuple(t.shape) for t in module.get_inputs()]
    assert shapes == [(2, 8, 128), (32, 6), (8,)]        # ffn = batch * 4 follows


def test_an_override_naming_no_constant_is_refused() -> None:
    with pytest.raises(SpecError, match="depth"):
        load_module(SPEC, "spec_sizes_unknown", {"depth": 2})


def test_constants_computed_from_literals_are_sizes_and_take_overrides() -> None:
    source = ("import torch\nN = 64 * 1024 * 1024\nM = 1 << 26\nK = 2 ** 12 + 8\nrows, cols = 4096 * 2, 512\n"
              "D = N // 2\nclass Model:\n    pass\n"
              "def get_inputs():\n    return [torch.zeros(N // M + cols), torch.zeros(D // M)]\n"
              "def get_init_inputs():\n    return []\n")
    # D is computed from another constant: it follows N rather than being a size of its own.
    assert outline(source).sizes == {"N": 1 << 26, "M": 1 << 26, "K": 4104, "rows": 8192, "cols": 512}
    module = load_module(source, "spec_sizes_computed", {"N": 256, "M": 128, "cols": 8})
    assert [tuple(t.shape) for t in module.get_inputs()] == [(10,), (1,)]


def test_elements_of_integer_tuples_are_sizes_of_their_own() -> None:
    source = ("import torch\nbatch = 64\ninput_shape = (3, 224, 224)\nkernel = [3, 5]\nname = ('a', 1)\nlayers = [h for h in (4, 8)]\n"
              "class Model:\n    pass\n"
              "def get_inputs():\n    return [torch.zeros(batch, *input_shape)]\n"
              "def get_init_inputs():\n    return [input_shape[0]]\n")
    sizes = outline(source).sizes
    assert sizes == {"batch": 64, "input_shape[0]": 3, "input_shape[1]": 224, "input_shape[2]": 224,
                     "kernel[0]": 3, "kernel[1]": 5, "name[1]": 1}
    module = load_module(source, "spec_sizes_tuple", {"batch": 2, "input_shape[1]": 16, "input_shape[2]": 8})
    assert tuple(module.get_inputs()[0].shape) == (2, 3, 16, 8) and module.get_init_inputs() == [3]
    with pytest.raises(SpecError, match=r"input_shape\[3\]"):
        load_module(source, "spec_sizes_tuple_bad", {"input_shape[3]": 2})
