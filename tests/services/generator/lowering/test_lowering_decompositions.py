"""Operators PyTorch's tables leave whole, lowered through kevolve's own decompositions."""

from __future__ import annotations

import pytest
import torch
from lowering_check import check, generate

from services.generator.lowering.decompositions import histc, trilinear
from services.generator.lowering.ir import Unsupported

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def spec(init: str, forward: str, inputs: str) -> str:
    return (HEAD + "\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        {init}\n\n"
            f"    def forward(self, *xs):\n        return {forward}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n\n"
            "def get_init_inputs():\n    return []\n")


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_bilinear_layers_are_two_products(form: str) -> None:
    """``nn.Bilinear`` (with and without bias, over a batch of 3-d inputs too) through
    ``aten._trilinear`` as an einsum: two matrix products, no [batch, out, in1, in2] tensor."""
    code = check(spec("self.b = nn.Bilinear(8, 12, 6)\n        self.c = nn.Bilinear(5, 5, 3, bias=False)",
                      "self.b(xs[0], xs[1]), self.c(xs[2], xs[2].flip(-1))",
                      "torch.randn(16, 8), torch.randn(16, 12), torch.randn(2, 7, 5)"), form=form)
    assert "tl.dot(" in code


def test_trilinear_matches_pytorch_on_its_own_arguments() -> None:
    """The decomposition itself, on ``_trilinear``'s argument forms: expand and sum dims."""
    a, w, b = torch.randn(4, 3), torch.randn(5, 3, 6), torch.randn(4, 6)
    want = torch.ops.aten._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3])
    torch.testing.assert_close(trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3]), want)
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    want = torch.ops.aten._trilinear(x, y, z, [], [], [], [1])
    torch.testing.assert_close(trilinear(x, y, z, [], [], [], [1]), want)


@pytest.mark.parametrize("form", ["gpu", "interpreter"])
def test_histograms_over_a_given_range_and_the_datas_own(form: str) -> None:
    """``torch.histc``: the data's range where none is given, one value widened by 1 each way,
    a given range that leaves values out (and counts one equal to max in the last bin), NaN
    not counted, float64 counts for float64 input."""
    forward = ("torch.histc(xs[0], bins=37), torch.histc(xs[0] * 0 + 2.0, bins=5), "
               "torch.histc(xs[0].double(), bins=64, min=-1.5, max=2.0), "
               "torch.histc(torch.where(xs[0] > 1.9, float('nan'), xs[0]), bins=8, min=-2, max=2), "
               "torch.histc(xs[0].clamp(max=1.0), bins=4, min=-1, max=1)")
    check(spec("pass", forward, "torch.randn(4000)"), form=form, trials=1)


def test_histc_counts_as_pytorch_does() -> None:
    x = torch.randn(1000)
    for args in [(10, 0, 0), (7, -1.0, 0.5), (3, 2.0, 2.0)]:
        torch.testing.assert_close(histc(x, *args), torch.histc(x, *args))


def test_rrelu_outside_training_is_a_leaky_relu() -> None:
    """``nn.RReLU`` in eval mode and ``F.rrelu(training=False)``: the mean slope."""
    code = check(spec("self.r = nn.RReLU(0.1, 0.3).eval()", "self.r(xs[0]) + F.rrelu(xs[0] * 2, training=False)",
                      "torch.randn(8, 33)"))
    assert "0.2" in code


@pytest.mark.parametrize("expr", ["torch.linalg.inv(xs[0])", "torch.linalg.cholesky(xs[0] @ xs[0].T)"])
def test_operators_with_side_effects_are_refused_by_what_they_are(expr: str) -> None:
    """torch.linalg's solvers check their input at run time (an effect torch.export threads a
    token through): the refusal names the check, not the export's internals."""
    with pytest.raises(Unsupported, match="side effects .*_linalg_check_errors"):
        generate(spec("pass", expr, "torch.randn(6, 6)"))
