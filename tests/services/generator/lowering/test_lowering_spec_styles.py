"""Specs as users write them: module containers, custom blocks, parameters built by hand,
constructor arguments of every kind, capitalised and defaulted forward arguments."""

from __future__ import annotations

import pytest
from lowering_check import _load, check, generate

import torch

STYLES = {
    "sequential_and_modulelist": '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(sizes[-1], 3), nn.Tanh())
    def forward(self, X):
        for layer in self.layers:
            X = torch.relu(layer(X))
        return self.head(X)

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return [[8, 16, 12]]
''',
    "custom_blocks_inheriting": '''
import torch
import torch.nn as nn

class Base(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

class Gated(Base):
    def __init__(self, dim, act="gelu"):
        super(Gated, self).__init__(dim)
        self.gate = nn.Parameter(torch.randn(dim) * 0.1)
        self.act = act
    def forward(self, x):
        y = self.proj(x)
        y = torch.nn.functional.gelu(y) if self.act == "gelu" else torch.relu(y)
        return y * torch.sigmoid(self.gate)

class Model(nn.Module):
    def __init__(self, dim, depth, act):
        super().__init__()
        self.blocks = nn.ModuleDict({f"b{i}": Gated(dim, act) for i in range(depth)})
        self.register_buffer("scale", torch.linspace(0.5, 1.5, dim))
    def forward(self, A, B=None):
        for block in self.blocks.values():
            A = A + block(A)
        return A * self.scale

def get_inputs():
    return [torch.randn(3, 10)]

def get_init_inputs():
    return [10, 2, "gelu"]
''',
    "module_level_helpers": '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 2 * 16
EPS = 1e-5

def init_weight(n, m):
    return nn.Parameter(torch.randn(n, m) / math.sqrt(m))

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = init_weight(HIDDEN, 16)
        self.eps = EPS
    def forward(self, x):
        y = F.linear(x, self.w)
        return y / (y.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()

def get_inputs():
    return [torch.randn(5, 16)]

def get_init_inputs():
    return []
''',
}


@pytest.mark.parametrize("name", sorted(STYLES))
def test_spec_styles(name: str) -> None:
    check(STYLES[name])


PLAIN_ATTRIBUTES = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, hidden, layers, batch):
        super().__init__()
        self.h0 = torch.randn((layers, batch, hidden))
        self.c0 = torch.randn((layers, batch, hidden))
        self.lstm = nn.LSTM(input_size, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, 5)
        self.table = torch.randn(300, 300)  # past the size a constant of the graph may have

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, state = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :]) + self.table.to(x.device)[:4, :5], state[0]

def get_inputs():
    return [torch.randn(4, 7, 6)]

def get_init_inputs():
    return [6, 12, 2, 4]
'''


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_tensors_held_as_plain_attributes_are_read_from_the_module(form: str) -> None:
    """Initial states made in ``__init__`` as plain tensors (neither parameter nor buffer) and
    moved in forward, as recurrent specs often hold them, and a large plain tensor: the
    candidate reads each from its own module (same seed, same values), on the input's
    device, rather than carrying it as a constant."""
    code = check(PLAIN_ATTRIBUTES, form=form, trials=1)
    assert "self.h0.to(dev)" in code and "self.table.to(dev)" in code
    # Held as buffers outside the weights: moving the module moves them once, and the
    # reference's state dict (which has none of them) still loads.
    model = _load(code, f"plain_attributes_{form}").ModelNew(6, 12, 2, 4)
    assert {"h0", "c0", "table"} <= dict(model.named_buffers()).keys()
    assert not {"h0", "c0", "table"} & model.state_dict().keys()
    assert model.to(torch.float64).h0.dtype == torch.float64


def test_other_constructor_arguments_are_refused_naming_the_attribute() -> None:
    source = STYLES["custom_blocks_inheriting"]
    cand = _load(generate(source), "cand_args")
    with pytest.raises(ValueError, match="act"):
        cand.ModelNew(10, 2, "relu")


def test_other_input_shapes_are_refused_naming_the_served_ones() -> None:
    cand = _load(generate(STYLES["module_level_helpers"]), "cand_shapes")
    model = cand.ModelNew()
    with pytest.raises(ValueError, match=r"\(5, 16\)"):
        model(torch.randn(6, 16))


def test_a_missing_package_is_named() -> None:
    import tempfile

    from services.generator.lowering.capture import capture

    source = "import einops_not_here\n" + STYLES["module_level_helpers"]
    with tempfile.NamedTemporaryFile("w", suffix=".py") as fh:
        fh.write(source)
        fh.flush()
        result = capture(source, [("default", {})], fh.name)
    assert not result.ok and "'einops_not_here'" in result.error and "not installed" in result.error


def test_constant_tensors_built_in_forward() -> None:
    source = STYLES["module_level_helpers"].replace(
        "        return y / (y.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()",
        "        w = torch.tensor([0.5, 1.5, 2.0, 1.0] * 8)\n"
        "        return y * w / (y.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()")
    code = check(source)
    assert "_kv_consts" in code
    cand = _load(code, "cand_consts")
    model = cand.ModelNew()
    x = torch.randn(5, 16)
    model(x)
    assert model(x).shape == (5, 32) and len(model._kv_consts) == 1  # built once, reused


def test_a_layer_that_exists_for_some_constructor_arguments_only() -> None:
    """A residual projection built only where the widths differ: the program captured at two
    sizes serves both (the slot is empty at one, a Linear at the other), and says which
    arguments it was not built for otherwise."""
    import tempfile

    from services.generator.lowering import program_source
    from services.generator.lowering.capture import capture

    source = '''
import torch
import torch.nn as nn

width = 8
out_width = 8


class Model(nn.Module):
    def __init__(self, width, out_width):
        super().__init__()
        self.body = nn.Linear(width, out_width)
        self.residual = nn.Linear(width, out_width, bias=False) if width != out_width else None

    def forward(self, x):
        res = x if self.residual is None else self.residual(x)
        return torch.relu(self.body(x)) + res


def get_inputs():
    return [torch.randn(4, width)]


def get_init_inputs():
    return [width, out_width]
'''
    with tempfile.NamedTemporaryFile("w", suffix=".py") as fh:
        fh.write(source)
        fh.flush()
        cap = capture(source, [("same", {}), ("wider", {"out_width": 12})], fh.name)
    cand = _load(program_source(source, "optional_layer", cap), "cand_optional")
    for sizes in ({}, {"out_width": 12}):
        spec = _load(source, f"spec_optional_{len(sizes)}", sizes or None)
        torch.manual_seed(0)
        ref = spec.Model(*spec.get_init_inputs()).eval()
        new = cand.ModelNew(*spec.get_init_inputs()).eval()
        new.load_state_dict(ref.state_dict())
        x = spec.get_inputs()[0]
        torch.testing.assert_close(new(x), ref(x))
    with pytest.raises(ValueError, match="out_features"):
        cand.ModelNew(8, 10)


def test_one_import_statement_of_several_modules_keeps_the_allowed_ones() -> None:
    """``import torch, torch.nn as nn, torch.nn.functional as F``: the program keeps torch and
    nn (its constructors need nn) and leaves F out (a candidate may not import it); dropping
    the whole statement lost nn."""
    source = '''
import math, torch, torch.nn as nn, torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 6)

    def forward(self, x):
        return F.gelu(self.fc(x)) * math.pi


def get_inputs():
    return [torch.randn(5, 12)]


def get_init_inputs():
    return []
'''
    code = check(source)
    assert "import torch.nn as nn" in code and "functional" not in code.split("@triton.jit")[0]


NUMPY_IN_INIT = '''
import numpy as np
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = 1.0 / np.sqrt(dim)
        table = torch.arange(-3.0, 4.0)
        self.register_buffer("table", torch.sign(table) * torch.log2(torch.abs(table) + 1.0) / np.log2(8))
        self.proj = nn.Linear(dim, dim)
    def forward(self, x):
        return self.proj(x) * self.scale + self.table.sum()

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return [16]
'''


def test_numpy_scalar_math_in_a_constructor_is_carried_as_math() -> None:
    """``np.sqrt(dim)``, ``np.log2(8)`` in ``__init__`` (the candidate may not import NumPy):
    math's functions give the same floats. Any other NumPy use is still refused by name."""
    code = check(NUMPY_IN_INIT)
    assert "import math" in code and "math.log2(8)" in code and "np." not in code
    with pytest.raises(Exception, match="np, imported from a module"):
        generate(NUMPY_IN_INIT.replace("np.sqrt(dim)", "np.array([dim]).sum()"))
