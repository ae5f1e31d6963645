"""Attention through the general lowering: one streaming kernel that never stores the scores,
for attention written by hand, through scaled_dot_product_attention, masked or not."""

from __future__ import annotations

import pytest
from lowering_check import check

from services.generator.lowering.tunables import Tunables

HEAD = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"


def _spec(body: str, inputs: str, init: str = "") -> str:
    init_code = f"    def __init__(self):\n        super().__init__()\n{init}\n" if init else ""
    return (HEAD + init_code + "    def forward(self, q, k, v):\n" + body
            + f"\n\ndef get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n")


QKV = "torch.randn(2, 3, 40, 16), torch.randn(2, 3, 40, 16), torch.randn(2, 3, 40, 24)"
CASES = {
    "by_hand": "        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))\n        return torch.softmax(s, dim=-1) @ v",
    "sdpa": "        return F.scaled_dot_product_attention(q, k, v)",
    "sdpa_causal": "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    "masked_fill": ("        s = (q @ k.transpose(-2, -1)) * 0.25\n        n = s.size(-1)\n"
                    "        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))\n"
                    "        s = s.masked_fill(~mask, float('-inf'))\n        return F.softmax(s, dim=-1) @ v"),
    "bias_added": ("        s = q @ k.transpose(-2, -1) + self.bias\n        return torch.softmax(s, -1) @ v"),
    # A boolean mask with a fully masked row: SDPA guards that row's softmax (zeros, not NaN)
    # by a per-row count of finite logits, which the streaming kernel keeps itself.
    "sdpa_bool_mask": "        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)",
}
INITS = {
    "bias_added": "        self.bias = nn.Parameter(torch.randn(40, 40))",
    "sdpa_bool_mask": ("        mask = torch.rand(40, 40) > 0.3\n        mask[5] = False\n"
                       "        self.register_buffer('mask', mask)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_forms(name: str) -> None:
    code = check(_spec(CASES[name], QKV, INITS.get(name, "")), atol=2e-4, rtol=2e-4)
    wrapper = code.split("class ModelNew")[1]
    launches = [line.strip() for line in wrapper.splitlines() if line.strip().startswith("_k")]
    # One streaming kernel; no kernel writes a score-sized tensor (40 x 40 per head)
    assert any("_attention" in line for line in launches), launches
    assert not [line for line in wrapper.splitlines() if "torch.empty(" in line and "40, 40)" in line], wrapper


def test_half_precision_attention() -> None:
    code = check(_spec(CASES["by_hand"], "torch.randn(2, 4, 64, 32).half(), torch.randn(2, 4, 64, 32).half(), "
                       "torch.randn(2, 4, 64, 32).half()"), atol=3e-3, rtol=3e-3)
    assert "_attention" in code


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sdpa", "sdpa_causal"])
def test_half_sdpa_multiplies_its_inputs_narrow(name: str, dtype: str) -> None:
    """The capture writes a 16-bit SDPA as float32 products of widened, scaled inputs; the
    kernel multiplies the 16-bit inputs as loaded (the same products, exactly) and scales the
    product, instead of storing float32 copies of the queries and keys first."""
    qkv = ", ".join(f"torch.randn(2, 3, 40, 16, dtype=torch.{dtype})" for _ in range(3))
    code = check(_spec(CASES[name], qkv), atol=1e-2, rtol=1e-2)
    wrapper = code.split("class ModelNew")[1]
    assert "torch.empty((2, 3, 40, 16), dtype=torch.float32" not in wrapper, wrapper
    attention = code.split("def _k0_0_attention(")[1].split("@triton.jit")[0]
    assert "s = s * 0.25" in attention, attention  # (16 ** -0.25) ** 2 on each operand


def test_scores_read_elsewhere_are_still_stored() -> None:
    body = ("        s = q @ k.transpose(-2, -1)\n        p = torch.softmax(s, -1)\n"
            "        return p @ v, s.amax(-1)")
    check(_spec(body, QKV))


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
@pytest.mark.parametrize("name", ["by_hand", "sdpa_causal", "masked_fill"])
def test_many_short_attentions_share_interpreted_programs(name: str, form: str) -> None:
    """Many (batch, head) pairs of a few tokens each: under the interpreter several pairs run in
    one program (a batched, three-dimensional form of the kernel); the GPU's own form, one pair
    per program, computes the same."""
    qkv = "torch.randn(37, 3, 5, 16), torch.randn(37, 3, 5, 16), torch.randn(37, 3, 5, 8)"
    code = check(_spec(CASES[name], qkv), atol=2e-4, rtol=2e-4, form=form)
    assert "_attention_i[" in code and "BLOCK_Z=" in code


def test_bfloat16_attention_by_hand_rounds_as_its_spec_does() -> None:
    """softmax(QK^T * scale) V written out in bfloat16 on scaled inputs: the scores are
    rounded to bfloat16 as the product stores them, and the probabilities once normalised,
    as softmax stores them. Rounding neither (or the running, unnormalised probabilities)
    put values tens of tolerances off."""
    body = "        s = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5\n        return torch.softmax(s, dim=-1) @ v"
    bf = "(torch.randn(2, 3, 48, 8) * 3 + 0.5).to(torch.bfloat16)"
    for form in ("interpreter", "gpu"):
        code = check(_spec(body, f"{bf}, {bf}, {bf}"), atol=1e-2, rtol=1e-2, trials=3, form=form)
        assert "p = tl.exp(g - m_ref) / l_i" in code


def test_the_online_softmax_rounds_the_running_probabilities_in_one_walk() -> None:
    """ATTENTION_SOFTMAX=online (the search's faster form): one walk over the keys, the
    running probabilities rounded to bfloat16 as flash attention rounds them; on data whose
    rows are not peaked it stays within the 16-bit tolerance."""
    body = "        s = q @ k.transpose(-2, -1) * q.size(-1) ** -0.5\n        return torch.softmax(s, dim=-1) @ v"
    bf = "torch.randn(2, 3, 48, 8).to(torch.bfloat16)"
    for form in ("interpreter", "gpu"):
        code = check(_spec(body, f"{bf}, {bf}, {bf}"), atol=1e-2, rtol=1e-2, trials=3, form=form,
                     tuned=Tunables(attention_softmax="online"))
        kernel = code.split("def _k0_0_attention(")[1].split("@triton.jit")[0]
        assert kernel.count("for n0 in range(") == 1 and "/ l_i" not in kernel.split("for n0")[1].split("o = ")[0]
        assert "_kv_round_bf16(" in kernel
