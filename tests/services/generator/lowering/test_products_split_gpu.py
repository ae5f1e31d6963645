"""On an NVIDIA GPU: large float32 products, whose operands the lowering splits once into TF32
parts (``products_split``), keep float32 accuracy: against a float64 reference, no worse than
twice PyTorch's own float32 product (TF32 off).

Each program runs compiled in a process of its own: this one has Triton's interpreter
switched on for the other lowering tests. Skipped without CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lowering_check import generate, run_compiled

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or torch.version.hip is not None,
                                reason="needs an NVIDIA GPU")

# A plain product with a long K, a linear layer with a bias and an activation (a transposed
# weight, an epilogue) and a batched product: each has 300 or more 128 x 128 tiles.
SPEC = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(1024, 2560)

    def forward(self, a, b, x, p, q):
        return a @ b, torch.nn.functional.gelu(self.proj(x)), torch.bmm(p, q)


def get_inputs():
    return [torch.randn(2560, 4096), torch.randn(4096, 2048), torch.randn(2048, 1024) * 4,
            torch.randn(8, 768, 512), torch.randn(8, 512, 896)]


def get_init_inputs():
    return []
'''

RUN = '''
import sys
import torch
from kevolve.specfile import load_module
torch.backends.cuda.matmul.allow_tf32 = False
spec_path, prog_path = sys.argv[1], sys.argv[2]
spec = load_module(open(spec_path).read(), "spec", None, spec_path)
torch.manual_seed(4)
ref_model = spec.Model().cuda()
model = load_module(open(prog_path).read(), "prog", None, prog_path).ModelNew().cuda()
model.load_state_dict(ref_model.state_dict(), strict=False)
torch.manual_seed(9)
inputs = [x.cuda() for x in spec.get_inputs()]
with torch.no_grad():
    got = model(*inputs)
    want = ref_model(*inputs)
    exact = ref_model.double()(*[x.double() for x in inputs])
for i, (g, w, e) in enumerate(zip(got, want, exact)):
    ours, torchs = float((g.double() - e).abs().max()), float((w.double() - e).abs().max())
    # Against the exact product, as close as PyTorch's own float32 product (a running
    # accumulator taking the three TF32 products drifted to 13x its error).
    assert ours <= 2 * torchs + 1e-6, (i, ours, torchs)
    print(i, "error", ours, "torch", torchs)
print("split products: float32 accuracy")
'''


def test_split_float32_products_keep_float32_accuracy(tmp_path: Path) -> None:
    spec = tmp_path / "spec.py"
    spec.write_text(SPEC)
    program = tmp_path / "program.py"
    code = generate(SPEC)
    assert code.count("& 0xFFFFE000") == 6, "each of the three products splits both operands"
    program.write_text(code)
    assert "float32 accuracy" in run_compiled(RUN, str(spec), str(program))
