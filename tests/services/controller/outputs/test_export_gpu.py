"""On a real GPU the exported module's kernels go through Triton's compiler, not its
interpreter: the embedded-source trick (linecache) must hold up there too."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from test_export_dispatch import CANDS, CASES, SPEC, _import

from services.controller.outputs.export import export_module

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_exported_module_compiles_and_dispatches_on_gpu(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    out = tmp_path / "exported_gpu.py"
    export_module(out, SPEC, CASES, CANDS)
    mod = _import(out)
    model, ref = mod.ModelNew(2.0).cuda(), mod.Model(2.0).cuda()
    for shape, node in {(4, 64): "row/2", (4, 300): "flat-1", (33, 64): None}.items():
        x = torch.randn(*shape, device="cuda")
        assert mod.choose(x) == node
        torch.testing.assert_close(model(x), ref(x))
    assert mod._modules["row/2"].CALLS == [(4, 64)] and mod._modules["flat-1"].CALLS == [(4, 300)]
