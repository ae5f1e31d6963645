"""The exported module dispatches per shape to real Triton kernels and falls back to PyTorch."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from services.controller.outputs.export import (ExportCandidate, ExportCase, build_export, cases_from_reports,
                                        choose_per_case, export_module, source_literal)

SPEC = '''
import torch
from torch import nn

rows = 4
cols = 64


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [2.0]
'''

# Two candidates that both define `_kernel` and `ModelNew` differently: if their namespaces
# collided, one would run the other's kernel. Each tags its output path in a module global.
FLAT = '''
import torch
import triton
import triton.language as tl
from torch import nn

CALLS = []


@triton.jit
def _kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        CALLS.append(tuple(x.shape))
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _kernel[(triton.cdiv(n, 256),)](x, out, n, self.scale, BLOCK=256)
        return out
'''

ROWWISE = '''
import torch
import triton
import triton.language as tl
from torch import nn

CALLS = []


@triton.jit
def _kernel(x_ptr, out_ptr, cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask)
    tl.store(out_ptr + row * cols + offs, tl.where(x > 0, x, 0.0) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        CALLS.append(tuple(x.shape))
        x = x.contiguous()
        out = torch.empty_like(x)
        _kernel[(x.shape[0],)](x, out, x.shape[1], self.scale, BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
'''

BROKEN = "raise RuntimeError('never embedded: it did not pass')\n"

CASES = [ExportCase("default"), ExportCase("wide", {"cols": 300}), ExportCase("tall", {"rows": 33}),
         ExportCase("unmeasured", {"rows": 2, "cols": 8})]
CANDS = [
    ExportCandidate("flat-1", FLAT, {"default": 1.4, "wide": 2.0, "tall": 0.8}),
    ExportCandidate("row/2", ROWWISE, {"default": 1.9, "wide": 1.5, "tall": 1.0}),
    ExportCandidate("bad", BROKEN, {"default": 9.0, "wide": 9.0, "tall": 9.0}, passed=False),
]


def _import(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("kv_export_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["kv_export_test"] = module
    spec.loader.exec_module(module)
    return module


def test_choices_skip_unverified_and_keep_reference_where_nothing_wins() -> None:
    got = {c.case: c.node_id for c in choose_per_case(CASES, CANDS)}
    assert got == {"default": "row/2", "wide": "flat-1", "tall": None, "unmeasured": None}


def test_exported_module_dispatches_per_shape_and_matches_reference(tmp_path: Path) -> None:
    out = tmp_path / "exported.py"
    export_module(out, SPEC, CASES, CANDS, job_id="job-1", device="cpu")  # verified under the interpreter
    text = out.read_text()
    assert "never embedded" not in text and "default: row/2 (1.90x)" in text
    assert "tall: reference (best kernel only 1.00x)" in text
    assert "unmeasured: reference (not measured)" in text
    assert "\ndef _kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):\n" in text  # readable, not repr'd
    mod = _import(out)
    model, ref = mod.ModelNew(2.0), mod.Model(2.0)
    flat, row = mod._modules["flat-1"], mod._modules["row/2"]
    assert flat._kernel is not row._kernel  # same symbol names, separate namespaces
    expected = {(4, 64): "row/2", (4, 300): "flat-1", (33, 64): None, (2, 8): None, (5, 5): None}
    for shape, node in expected.items():
        x = torch.randn(*shape)
        assert mod.choose(x) == node, shape
        torch.testing.assert_close(model(x), ref(x))
    assert row.CALLS == [(4, 64)] and flat.CALLS == [(4, 300)]  # the reference served the rest
    # dtype is part of the key: a float64 call was never measured -> reference.
    assert mod.choose(torch.randn(4, 64, dtype=torch.float64)) is None


@pytest.mark.parametrize("src", ["x = 1\n", "s = '''doc'''\n", "p = r'a\\b'\n", "x = 'end'", "a\\",
                                 "w = 1\r\n"])
def test_embedded_sources_round_trip_exactly(src: str) -> None:
    assert ast.literal_eval(source_literal(src)) == src


def test_cases_come_from_evaluation_reports_and_counts_match_the_api() -> None:
    reports = [{"result": {"cases": [{"name": "default", "sizes": {"rows": "4", "cols": "64"}},
                                     {"name": "wide", "sizes": {"rows": "4", "cols": "300"}}]}},
               {"result": {"cases": [{"name": "wide", "sizes": {"cols": "1"}},
                                     {"name": "tall", "sizes": {}}]}},
               {"result": {}}]
    cases = cases_from_reports(reports)
    assert [(c.name, c.sizes) for c in cases] == [("default", {"rows": 4, "cols": 64}),
                                                  ("wide", {"rows": 4, "cols": 300}), ("tall", {})]
    result = build_export(SPEC, cases, CANDS)
    assert (result.kernels, result.fallbacks) == (2, 1)
    assert "tall: reference" in result.source


def test_other_constructor_arguments_and_other_devices_run_the_reference(tmp_path: Path) -> None:
    """A kernel verified for Model(2.0) on one device never serves ModelNew(0.5) (it would have
    scaled by 2.0), nor tensors on a device it was not verified on (a CUDA-verified kernel
    given CPU tensors crashed in Triton): the reference computes those, and the header says so."""
    cpu_out, cuda_out = tmp_path / "cpu_export.py", tmp_path / "cuda_export.py"
    export_module(cpu_out, SPEC, CASES, CANDS, device="cpu")
    export_module(cuda_out, SPEC, CASES, CANDS, device="cuda")
    assert "constructor arguments of that case" in cpu_out.read_text()
    mod = _import(cpu_out)
    row = mod._modules["row/2"]
    x = torch.randn(4, 64)
    other = mod.ModelNew(0.5)
    torch.testing.assert_close(other(x), torch.relu(x) * 0.5)
    assert row.CALLS == [] and mod.choose(x) == "row/2"
    torch.testing.assert_close(mod.ModelNew(2.0)(x), torch.relu(x) * 2.0)
    assert row.CALLS == [(4, 64)]
    gpu_mod = _import(cuda_out)
    gpu_row = gpu_mod._modules["row/2"]
    torch.testing.assert_close(gpu_mod.ModelNew(2.0)(x), torch.relu(x) * 2.0)  # CPU tensors: the reference
    assert gpu_row.CALLS == [] and "verified on: cuda" in cuda_out.read_text()
