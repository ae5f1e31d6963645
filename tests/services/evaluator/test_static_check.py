"""The AST checks: obfuscations resolve to the rule they evade; honest wrappers stay clean."""

from __future__ import annotations

import pytest
from evaluator_helpers import FIXTURES

from services.evaluator.static_check import check_source

KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.sum(x, axis=0) + tl.exp(x), mask=offs < n)
"""


def rules(body: str) -> list[str]:
    return [v.rule for v in check_source(KERNEL + body)]


def test_every_correct_fixture_is_clean() -> None:
    for path in sorted((FIXTURES / "kernels" / "correct").glob("*.py")):
        assert check_source(path.read_text()) == [], path.name


@pytest.mark.parametrize(
    "body, rule",
    [
        (
            "import torch as T\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return T.matmul(x, x)",
            "torch_compute",
        ),
        (
            "from torch import softmax as s\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return s(x, -1)",
            "torch_compute",
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.exp().sum(-1)",
            "torch_compute",
        ),
        ("class ModelNew(nn.Module):\n    def forward(self, x):\n        return x @ x", "torch_compute"),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return getattr(torch, 'soft' + 'max')(x, -1)",
            "dynamic_code",
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return getattr(torch, 'softmax')(x, -1)",
            "torch_compute",
        ),
        ("class ModelNew(nn.Module):\n    def forward(self, x):\n        return eval('x')", "dynamic_code"),
        ("import importlib\nclass ModelNew(nn.Module):\n    pass", "banned_import"),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.__class__.__subclasses__()",
            "introspection",
        ),
        ("tl.sum = lambda *a: 0\nclass ModelNew(nn.Module):\n    pass", "monkeypatch"),
        (
            "import triton.testing as tt\ntt.do_bench = None\nclass ModelNew(nn.Module):\n    pass",
            "monkeypatch",
        ),
        ("s = torch.cuda.Stream()\nclass ModelNew(nn.Module):\n    pass", "streams"),
        ("from .spec import Model\nclass ModelNew(nn.Module):\n    pass", "banned_import"),
        # triton.tools.tensor_descriptor is allowed (TMA descriptors); the rest of triton.tools is not
        ("from triton.tools import disasm\nclass ModelNew(nn.Module):\n    pass", "banned_import"),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            return x\n        except Exception:\n"
            "            return None",
            "try_fallback",
        ),
    ],
)
def test_violation_is_named(body: str, rule: str) -> None:
    found = rules(body)
    assert found and found[0] == rule, found


def test_allocation_views_and_reraise_are_allowed() -> None:
    body = (
        "class ModelNew(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(4))\n"
        "    def forward(self, x):\n"
        "        x = x.contiguous().view(-1)\n        y = torch.empty_like(x)\n"
        "        z = torch.zeros(x.numel(), dtype=torch.float32, device=x.device)\n"
        "        try:\n            k[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)\n"
        "        except RuntimeError:\n            raise\n"
        "        return y.reshape(x.shape)\n"
    )
    assert rules(body) == []


def test_a_wrapper_may_read_which_vendors_gpu_it_runs_on() -> None:
    """``torch.version.hip`` (None on NVIDIA's CUDA) picks NVIDIA-only inline PTX; the rest of
    ``torch.version`` stays out, like any torch path not on the list."""
    body = ("class ModelNew(nn.Module):\n    def forward(self, x):\n"
            "        ptx = x.device.type == 'cuda' and torch.version.hip is None\n        return x\n")
    assert rules(body) == []
    assert rules(body.replace("torch.version.hip", "torch.version.git_version")) == ["torch_compute"]


def test_tensor_descriptors_are_allowed() -> None:
    body = (
        "from triton.tools.tensor_descriptor import TensorDescriptor\n"
        "class ModelNew(nn.Module):\n"
        "    def forward(self, x):\n"
        "        y = torch.empty_like(x)\n"
        "        d = TensorDescriptor.from_tensor(x.transpose(0, 1), [64, 64])\n"
        "        k[(1,)](d, y, x.numel(), BLOCK=128)\n"
        "        return y\n"
    )
    assert rules(body) == []


def test_missing_kernel_is_reported() -> None:
    assert [v.rule for v in check_source("import torch\nclass ModelNew: pass\n")] == ["no_triton_kernel"]


def test_parameter_initialisation_is_allowed_in_init_only() -> None:
    """ModelNew may copy Model.__init__'s random weight init; forward may not use the same calls."""
    init = (
        "class ModelNew(nn.Module):\n"
        "    def __init__(self, h):\n        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(h) * 0.1 + 1.0)\n"
        "        self.b = nn.Parameter(torch.sort(torch.rand(h)).values)\n"
    )
    assert rules(init + "    def forward(self, x):\n        return x\n") == []
    in_forward = init + "    def forward(self, x):\n        return x + torch.randn(x.shape)\n"
    assert rules(in_forward) == ["torch_compute"]


@pytest.mark.parametrize(
    "body, rule",
    [
        # A module reached through an allowed module's attributes is that module.
        ("import typing\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return typing.sys.modules['os'].listdir('/')", "banned_import"),
        ("import dataclasses\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return dataclasses.sys.modules", "banned_import"),
        ("import typing\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return getattr(typing, 'sys')", "banned_import"),
        # A module held in a variable would escape the path checks.
        ("import typing\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        m = typing\n"
         "        return m.sys", "introspection"),
        ("import functools, typing\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return functools.reduce(getattr, ['sys', 'modules'], typing)", "dynamic_code"),
        # Triton's internals (a C compiler driver, a module loader) are not for candidates.
        ("class ModelNew(nn.Module):\n    def forward(self, x):\n"
         "        return triton.runtime.build.compile_module_from_src('', 'm')", "banned_import"),
        ("from triton.runtime import build\nclass ModelNew(nn.Module):\n    pass", "banned_import"),
    ],
)
def test_modules_reached_through_other_modules_are_refused(body: str, rule: str) -> None:
    assert rule in rules(body), check_source(KERNEL + body)


def test_allowed_triton_helpers_stay_clean() -> None:
    body = ("class ModelNew(nn.Module):\n    def forward(self, x):\n        y = torch.empty_like(x)\n"
            "        n = triton.next_power_of_2(x.shape[0])\n"
            "        k[(triton.cdiv(x.numel(), n),)](x, y, x.numel(), BLOCK=n)\n        return y\n")
    assert rules(body) == []


def test_constructors_may_build_constant_buffers_with_torch() -> None:
    body = ("class ModelNew(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
            "        mask = torch.tril(torch.ones(n, n)).view(1, 1, n, n)\n"
            "        pos = torch.arange(n).float().unsqueeze(1) @ torch.ones(1, 4)\n"
            "        self.register_buffer('mask', mask)\n        self.register_buffer('pe', torch.sin(pos).exp())\n"
            "    def forward(self, x):\n        y = torch.empty_like(x)\n"
            "        k[(1,)](x, y, x.numel(), BLOCK=128)\n        return y\n")
    assert rules(body) == []


@pytest.mark.parametrize("call", ["torch.ops.aten.mm.default(a, a)", "torch.utils.cpp_extension.load('m', [])",
                                  "torch.cuda.Stream()", "torch.load('w.pt')", "torch._C._set_grad_enabled(False)"])
def test_constructors_still_may_not_reach_beyond_tensors(call: str) -> None:
    body = f"class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        a = {call}\n"
    assert rules(body), call


def test_forward_compute_stays_refused() -> None:
    body = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.tril(x)\n"
    assert "torch_compute" in rules(body)


def test_kernels_are_counted_through_any_alias() -> None:
    from services.evaluator.static_check import kernel_count

    source = ("import triton as tr\nfrom triton import jit\nimport triton.language as tl\n\n"
              "@tr.jit\ndef a(x):\n    pass\n\n@jit\ndef b(x):\n    pass\n\n"
              "@tr.autotune(configs=[], key=[])\n@tr.jit\ndef c(x):\n    pass\n\ndef host(x):\n    return x\n")
    assert kernel_count(source) == 3
    with pytest.raises(SyntaxError):
        kernel_count("def broken(:\n")
