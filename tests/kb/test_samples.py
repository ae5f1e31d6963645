"""Every KB sample is a runnable kernel whose check() passes under the Triton interpreter.

Parametrized over the files in kb/samples/, so adding a sample adds a test.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from kevolve.config import REPO_ROOT

SAMPLES = sorted((REPO_ROOT / "kb" / "samples").glob("*.py"))


def test_samples_exist_for_every_family() -> None:
    names = {p.stem for p in SAMPLES}
    for family in ("elementwise_chain", "softmax", "layernorm", "rmsnorm", "matmul_epilogue", "batched_matmul",
                   "conv1d_implicit_gemm", "mapid", "bucketize", "batch_event_truncate", "jagged_sum"):
        assert family in names, f"kb/samples/{family}.py is missing"


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_runs_and_matches_pytorch(path: Path) -> None:
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree)
    assert doc and doc.splitlines()[0].strip(), f"{path.name}: the module docstring's first line describes it"
    assert any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body), f"{path.name} has no check()"
    assert "@triton.jit" in path.read_text()
    spec = importlib.util.spec_from_file_location(f"kb_sample_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.check()  # raises (assert_close) on any mismatch
