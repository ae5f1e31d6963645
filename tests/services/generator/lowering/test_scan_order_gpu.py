"""On a GPU: the generated float scans give PyTorch's own GPU results to the bit.

The interpreter tests check the GPU form against PyTorch's algorithm written out step by
step; this checks that algorithm against PyTorch itself, on the GPU it runs on. Each program
runs compiled in a process of its own: this one has Triton's interpreter switched on for
the other lowering tests. Skipped without CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lowering_check import generate, run_compiled

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


CASES = [  # (dtype, shape, dim)
    ("float32", (256, 11024), 1),   # long rows: PyTorch's rounding passes 1e-4 near zero
    ("float32", (4096, 5), 1),      # many short rows: PyTorch's chunk size wraps to 1024
    ("float32", (64, 300, 40), 2),
    ("float16", (64, 2048), 1),
    ("bfloat16", (32, 4000), 1),
    ("float32", (2048, 3, 64), 0),  # outer dims: one element after another
    ("float16", (16, 1024, 32), 1),
]

RUN = '''
import sys, torch
from kevolve.specfile import load_module
path, dtype, shape, dim = sys.argv[1], getattr(torch, sys.argv[2]), eval(sys.argv[3]), int(sys.argv[4])
model = load_module(open(path).read(), "scan_gpu", None, path).ModelNew().cuda()
torch.manual_seed(11)
x = torch.randn(shape, device="cuda").to(dtype)
y = (1 + torch.rand(shape, device="cuda") / 256).to(dtype)
with torch.no_grad():
    got = model(x, y)
want = (x.cumsum(dim), x.flip(dim).cumsum(dim).flip(dim), y.cumprod(dim))
for name, g, w in zip(("cumsum", "reverse cumsum", "cumprod"), got, want):
    differ = int((g != w).sum())
    print(f"{name}: {differ} of {w.numel()} values differ (max {float((g.double() - w.double()).abs().max()):.3g})")
    assert differ == 0
'''


def _spec(forward: str, inputs: str) -> str:
    return ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, *xs):\n"
            f"        return {forward}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n\n"
            "def get_init_inputs():\n    return []\n")


@pytest.mark.parametrize(("dtype", "shape", "dim"), CASES)
def test_generated_scans_equal_pytorchs_gpu_scans(tmp_path: Path, dtype: str, shape: tuple[int, ...],
                                                  dim: int) -> None:
    inputs = f"torch.randn{shape}.to(torch.{dtype}), (1 + torch.rand{shape} / 256).to(torch.{dtype})"
    source = _spec(f"xs[0].cumsum({dim}), xs[0].flip({dim}).cumsum({dim}).flip({dim}), xs[1].cumprod({dim})",
                   inputs)
    program = tmp_path / "program.py"
    program.write_text(generate(source))
    run_compiled(RUN, str(program), dtype, repr(shape), str(dim), timeout=300)
