"""Diagonal matrices (``torch.diag``, ``torch.diag_embed``) and products with them."""

from __future__ import annotations

import re

import pytest
from lowering_check import check

HEAD = "import torch\nimport torch.nn as nn\n"


def spec(forward: str, inputs: str) -> str:
    return (HEAD + f"\n\nclass Model(nn.Module):\n    def forward(self, *xs):\n        return {forward}\n\n\n"
            f"def get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n")


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_every_form_of_diag_and_diag_embed(form: str) -> None:
    """Vectors to matrices at any offset, matrices to their diagonals, embeddings along any
    two dims (float16 too), and a diagonal matrix read by other operators."""
    forward = ("torch.diag(xs[0]) + 1.0, torch.diag(xs[0], 2), torch.diag(xs[0], -1) * 2, torch.diag(xs[1]), "
               "torch.diag(xs[1], -2), torch.diag(xs[1], 3), torch.diag_embed(xs[1]), "
               "torch.diag_embed(xs[1], offset=1, dim1=0, dim2=2), torch.diag_embed(xs[2], -1), "
               "torch.diag(xs[0]).sum(0)")
    check(spec(forward, "torch.randn(5), torch.randn(6, 7), torch.randn(3, 4, dtype=torch.float16)"), form=form)


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_a_product_with_a_diagonal_matrix_scales_the_other_operand(form: str) -> None:
    """``diag(v) @ B`` and ``A @ diag(v)`` (float32 and float16) are one pointwise kernel, no
    product; an off-diagonal or batched embedding still multiplies, and agrees too."""
    forward = ("torch.diag(xs[0]) @ xs[1], xs[2] @ torch.diag(xs[0]), torch.diag(xs[3]) @ xs[4], "
               "torch.diag(xs[0], 1)[:5, :5] @ xs[1], torch.diag_embed(xs[2][:2, :5]) @ xs[1]")
    inputs = ("torch.randn(5), torch.randn(5, 7), torch.randn(3, 5), torch.randn(4, dtype=torch.float16), "
              "torch.randn(4, 6, dtype=torch.float16)")
    check(spec(forward, inputs), form=form)
    # Batched (a matmul of 3-d operands reaches its product through same-shape views) and not.
    scaling = check(spec("torch.diag(xs[0]) @ xs[1], xs[1].t() @ torch.diag(xs[0]), torch.diag_embed(xs[2]) @ xs[3]",
                         "torch.randn(5), torch.randn(5, 7), torch.rand(3, 4) + 0.5, torch.randn(3, 4, 6)"), form=form)
    assert "tl.dot" not in scaling and 1 <= len(re.findall(r"^\s+_k\w+\[", scaling, re.M)) <= 3
