"""On an NVIDIA GPU: the packed PTX rounding to bfloat16 (mathlib's ``_kv_round_bf16``) gives
the bits PyTorch's own rounding gives, on special values and ties, on the wide tiles it serves
(blocked tiles and a product's accumulator), and generated attention programs give the same
outputs with it and without it.

Each program runs compiled in a process of its own: this one has Triton's interpreter
switched on for the other lowering tests. Skipped without CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from lowering_check import generate, run_compiled

from services.generator.lowering.mathlib import HELPERS

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or torch.version.hip is not None,
                                reason="needs an NVIDIA GPU")

KERNELS = '''
import triton
import triton.language as tl
'''

# Kernels that round through the helper; the helper's source is put before them.
KERNEL_BODIES = '''

@triton.jit
def rows(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    off = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + off, _kv_round_bf16(tl.load(x_ptr + off), True))


@triton.jit
def flat(x_ptr, y_ptr, N: tl.constexpr):
    off = tl.arange(0, N)
    tl.store(y_ptr + off, _kv_round_bf16(tl.load(x_ptr + off), True))


@triton.jit
def product(a_ptr, b_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # A product's accumulator, in the tensor cores' own layout, as attention rounds its scores.
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    off = rm[:, None] * N + rn[None, :]
    tl.store(y_ptr + off, acc)
    tl.store(y_ptr + M * N + off, _kv_round_bf16(acc, True))
'''

HELPER_RUN = '''
import torch
from kernels_under_test import flat, product, rows

torch.manual_seed(5)
special = torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 3.4e38, -3.4e38,
                        1e-40, -1e-40, 1.17549435e-38, 1.00390625, 1.01171875, 1.0 + 2 ** -8 + 2 ** -20,
                        65504.0, 2 ** -133], device="cuda")
ties = (torch.randint(-2 ** 15, 2 ** 15, (512,), device="cuda", dtype=torch.int32) * 65536 + 32768).view(torch.float32)
scales = 10.0 ** torch.randint(-30, 30, (1 << 16,), device="cuda").float()
pool = torch.cat([special, ties, torch.randn(1 << 16, device="cuda") * scales])


def same(got, x):
    want = x.to(torch.bfloat16).to(torch.float32)
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan), "NaN where PyTorch has none, or none where it has"
    differ = int((got[~nan].view(torch.int32) != want[~nan].view(torch.int32)).sum())
    assert differ == 0, f"{differ} of {x.numel()} values differ"


for r, c in [(16, 16), (1, 64), (32, 64), (64, 128), (128, 128)]:
    x = pool[torch.randint(0, pool.numel(), (r * c,), device="cuda")].contiguous()
    y = torch.empty_like(x)
    rows[(1,)](x, y, R=r, C=c)
    same(y, x)
for n in (64, 1024, 1 << 16):
    x = pool[:n].contiguous() if n <= pool.numel() else pool
    y = torch.empty_like(x)
    flat[(1,)](x, y, N=n)
    same(y, x)
for m, n, k in [(16, 16, 16), (64, 64, 32), (128, 64, 64)]:
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16) * 3
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    y = torch.empty(2, m, n, device="cuda")
    product[(1,)](a, b, y, M=m, N=n, K=k)
    same(y[1], y[0])
print("helper: every shape rounds as PyTorch does")
'''

PROGRAM_RUN = '''
import sys
import torch
from kevolve.specfile import load_module
spec_path, prog_path = sys.argv[1], sys.argv[2]
spec = load_module(open(spec_path).read(), "spec", None, spec_path)
code = open(prog_path).read()
assert "_kv_round_bf16" in code and "PTX=ptx" in code
torch.manual_seed(3)
init = spec.get_init_inputs()
outs = []
for variant, text in (("ptx", code), ("plain", code.replace("PTX=ptx", "PTX=False"))):
    model = load_module(text, "prog_" + variant, None, prog_path).ModelNew(*init).cuda()
    torch.manual_seed(4)  # the same weights for both programs
    model.load_state_dict(spec.Model(*init).state_dict(), strict=False)
    torch.manual_seed(9)
    inputs = [x.cuda() for x in spec.get_inputs()]
    with torch.no_grad():
        outs.append(model(*inputs))
assert torch.equal(outs[0], outs[1]), float((outs[0].float() - outs[1].float()).abs().max())
print("program: the same bits with and without PTX")
'''

ATTENTION = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k, v):
        s = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5
        return torch.softmax(s, dim=-1) @ v


def get_inputs():
    return [torch.randn(2, 4, 300, 32, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
'''

BIASED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(200, 200, dtype=torch.bfloat16))

    def forward(self, q, k, v):
        s = (q @ k.transpose(-2, -1)) * 0.125 + self.bias
        return torch.softmax(s.float(), dim=-1).to(torch.bfloat16) @ v


def get_inputs():
    return [torch.randn(3, 5, 200, 64, dtype=torch.bfloat16) * 2 for _ in range(3)]


def get_init_inputs():
    return []
'''


def test_packed_rounding_gives_pytorchs_bits_on_every_tile_shape(tmp_path: Path) -> None:
    (tmp_path / "kernels_under_test.py").write_text(KERNELS + HELPERS["_kv_round_bf16"] + KERNEL_BODIES)
    script = tmp_path / "run.py"
    script.write_text(HELPER_RUN)
    assert "every shape rounds as PyTorch does" in run_compiled(str(script), path=tmp_path)


@pytest.mark.parametrize("name", ["attention", "biased_attention"])
def test_programs_give_the_same_bits_with_and_without_ptx(tmp_path: Path, name: str) -> None:
    source = {"attention": ATTENTION, "biased_attention": BIASED}[name]
    spec = tmp_path / "spec.py"
    spec.write_text(source)
    program = tmp_path / "program.py"
    program.write_text(generate(source))
    assert "the same bits" in run_compiled(PROGRAM_RUN, str(spec), str(program))
