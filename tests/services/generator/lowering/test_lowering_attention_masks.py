"""Masks written from indices bound the keys each query block walks (attention_masks.py): the
bounds read from the graph, and attention over several query and key blocks computing the
same as the reference with the masked blocks skipped."""

from __future__ import annotations

import os
import tempfile

import pytest
from lowering_check import check

from services.generator.lowering import ops_attention
from services.generator.lowering.attention_masks import KeyBound, key_bounds
from services.generator.lowering.capture import capture
from services.generator.lowering.tunables import Tunables

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"
MASKED = ("        s = (q @ k.transpose(-2, -1)) * 0.25\n        i = torch.arange(s.size(-2))[:, None]\n"
          "        j = torch.arange(s.size(-1))[None, :]\n        s = s.masked_fill(~({keep}), float('-inf'))\n"
          "        return torch.softmax(s, dim=-1) @ v")
BODIES = {
    "sdpa_causal": "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    "tril_offset": ("        s = (q @ k.transpose(-2, -1)) * 0.25\n        n = s.size(-1)\n"
                    "        keep = torch.tril(torch.ones(s.size(-2), n, dtype=torch.bool), diagonal=3)\n"
                    "        s = s.masked_fill(~keep, float('-inf'))\n        return torch.softmax(s, dim=-1) @ v"),
    "band": MASKED.format(keep="(j <= i) & (i - j < 20)"),
    "upper": MASKED.format(keep="j >= i"),
}
BOUNDS = {
    "sdpa_causal": [KeyBound(True, 1, 0)],
    "tril_offset": [KeyBound(True, 1, 3)],
    "band": [KeyBound(True, 1, 0), KeyBound(False, 1, -19)],
    "upper": [KeyBound(False, 1, 0)],
}


def _spec(body: str, inputs: str, init: str = "") -> str:
    init_code = f"    def __init__(self):\n        super().__init__()\n{init}\n" if init else ""
    return (HEAD + init_code + "    def forward(self, q, k, v):\n" + body
            + f"\n\ndef get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n")


def _qkv(lq: int, lk: int, dtype: str = "float32") -> str:
    return ", ".join(f"torch.randn(2, 3, {n}, 16, dtype=torch.{dtype})" for n in (lq, lk, lk))


def _bounds(source: str) -> list[KeyBound]:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(source)
    try:
        cap = capture(source, [("case", {})], fh.name)
    finally:
        os.unlink(fh.name)
    assert cap.ok, cap.error
    case = cap.cases[0]
    found = ops_attention.find(case)
    assert len(found) == 1, found
    match = next(iter(found.values()))
    return key_bounds({n.name: n for n in case.nodes}, match.logits)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_bounds_read_from_index_masks(name: str) -> None:
    assert _bounds(_spec(BODIES[name], _qkv(50, 50))) == BOUNDS[name]


def test_masks_read_from_data_give_no_bound() -> None:
    """A mask that is a tensor (a buffer, a padding mask) says nothing the graph can prove, and a
    condition only half written from indices must not be read as the whole condition."""
    buffer = ("        s = (q @ k.transpose(-2, -1)).masked_fill(self.keep == 0, float('-inf'))\n"
              "        return torch.softmax(s, dim=-1) @ v")
    init = "        self.register_buffer('keep', torch.tril(torch.ones(50, 50)))"
    assert _bounds(_spec(buffer, _qkv(50, 50), init)) == []
    half = MASKED.format(keep="(j <= i) | (self.pad > 0)")
    assert _bounds(_spec(half, _qkv(50, 50), "        self.register_buffer('pad', torch.rand(50) - 0.5)")) == []
    # The -inf branch selected where the index test holds and the data agrees: nothing is
    # known about the rows the data leaves unmasked.
    both = ("        s = q @ k.transpose(-2, -1)\n        i = torch.arange(50)[:, None]\n"
            "        j = torch.arange(50)[None, :]\n"
            "        s = s.masked_fill((j > i) & (self.pad > 0), float('-inf'))\n"
            "        return torch.softmax(s, dim=-1) @ v")
    assert _bounds(_spec(both, _qkv(50, 50), "        self.register_buffer('pad', torch.rand(50) - 0.5)")) == []


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_bounded_attention_over_many_blocks(name: str, form: str) -> None:
    """Blocks of 16 queries and 16 keys over 50 (the last block partial): each query block
    walks only the key blocks its mask leaves, in either launch form."""
    code = check(_spec(BODIES[name], _qkv(50, 50)), atol=2e-4, rtol=2e-4, form=form,
                 tuned=Tunables(attention_block=(16, 16)))
    assert "for n0 in range(n_lo, n_hi, BLOCK_N):" in code


def test_causal_with_fewer_queries_than_keys() -> None:
    """``is_causal`` with 20 queries over 50 keys keeps the top-left triangle (key <= query)."""
    code = check(_spec(BODIES["sdpa_causal"], _qkv(20, 50)), atol=2e-4, rtol=2e-4, form="gpu",
                 tuned=Tunables(attention_block=(16, 16)))
    assert "n_hi = tl.minimum(n_hi" in code


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_sdpa_multiplies_probabilities_in_its_type(dtype: str) -> None:
    """A 16-bit SDPA's values are 16-bit inputs widened, and its output is rounded back to 16
    bits: the probabilities are multiplied in that type against the values as loaded, and the
    kernel stores a 16-bit output (no float32 output for a later kernel to convert)."""
    code = check(_spec(BODIES["sdpa_causal"], _qkv(50, 50, dtype)), atol=1e-2, rtol=1e-2, form="gpu",
                 tuned=Tunables(attention_block=(16, 16)))
    attention = code.split("def _k0_0_attention(")[1].split("@triton.jit")[0]
    assert f"p.to(tl.{dtype})" in attention, attention
    assert f"o.to(tl.{dtype})" in attention, attention
    wrapper = code.split("class ModelNew")[1]
    assert "torch.empty((6, 50, 16), dtype=torch.float32" not in wrapper, wrapper


@pytest.mark.parametrize("form", ["interpreter", "gpu"])
def test_a_decode_step_reads_its_scores_in_the_streaming_kernel(form: str) -> None:
    """One query against 40 cached keys: the kernel computes the score tile itself (a size-1
    query dim indexed by 0 on one side and by its one-valued symbol on the other is the same
    index); no kernel stores the (6, 1, 40) scores."""
    qkv = "torch.randn(2, 3, 1, 16), torch.randn(2, 3, 40, 16), torch.randn(2, 3, 40, 16)"
    code = check(_spec("        return F.scaled_dot_product_attention(q, k, v)", qkv), atol=2e-4, rtol=2e-4, form=form)
    wrapper = code.split("class ModelNew")[1]
    assert "torch.empty((6, 1, 40)" not in wrapper and "_mm[" not in wrapper, wrapper


def test_searched_query_blocks_of_128_rows_over_wide_heads() -> None:
    """A search's 128-row query blocks apply to 128-wide heads too, with 8 warps for the
    [128, 128] accumulator (the first draft keeps 64 rows and 4 warps)."""
    qkv = ", ".join("torch.randn(1, 2, 150, 128)" for _ in range(3))
    source = _spec(BODIES["sdpa_causal"], qkv)
    code = check(source, atol=2e-4, rtol=2e-4, form="gpu", tuned=Tunables(attention_block=(128, 64)))
    assert "BLOCK_M=128, BLOCK_N=64, BLOCK_D=128, BLOCK_DV=128, num_warps=8" in code
    first = check(source, atol=2e-4, rtol=2e-4, form="gpu")
    assert "BLOCK_M=64, BLOCK_N=64, BLOCK_D=128, BLOCK_DV=128, num_warps=4" in first
