"""Output comparison in the trusted worker: the chunked fast path agrees with the full analysis,
and every kind of wrong output is still named, wherever in the tensor it sits."""

from __future__ import annotations

import pytest
import torch

from services.evaluator import compare as cmp
from services.evaluator.compare import Agreement, Mismatch, compare


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Many chunks even on small tensors, so chunk boundaries are exercised.
    monkeypatch.setattr(cmp, "CHUNK", 1000)


def _pair(dtype: torch.dtype, n: int = 4099) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(7)
    ref = torch.randn(n, generator=gen).to(dtype)
    out = (ref.double() * (1 + 1e-5 * torch.randn(n, generator=gen, dtype=torch.float64))).to(dtype)
    return ref.reshape(-1, 1).expand(-1, 3).contiguous(), out.reshape(-1, 1).expand(-1, 3).contiguous()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_agreement_figures_match_the_full_analysis(dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    ref, out = _pair(dtype)
    kept = ref.clone(), out.clone()
    quick = compare([ref], [out], 1e-3, 1e-3)
    assert torch.equal(ref, kept[0]) and torch.equal(out, kept[1])  # the inputs are left as they were
    monkeypatch.setattr(cmp, "_all_finite_and_close", lambda *args: None)  # force the full analysis
    full = compare([ref], [out], 1e-3, 1e-3)
    assert isinstance(quick, Agreement) and isinstance(full, Agreement)
    assert quick.max_abs_error == pytest.approx(full.max_abs_error, rel=1e-12)
    assert quick.max_rel_error == pytest.approx(full.max_rel_error, rel=1e-12)


@pytest.mark.parametrize("where", [0, 999, 1000, 12296])  # first element, chunk edges, last element
def test_one_wrong_value_anywhere_is_caught_and_counted(where: int) -> None:
    ref, out = _pair(torch.float16)
    flat = out.reshape(-1)
    flat[where] = flat[where] + 1.0
    res = compare([ref], [out], 0.0, 0.0)
    assert isinstance(res, Mismatch) and res.check == "allclose"
    assert "1 of 12297 values" in res.reason


def test_nan_and_inf_in_the_output_are_named() -> None:
    ref, out = _pair(torch.float32)
    out.reshape(-1)[1500] = float("nan")
    res = compare([ref], [out], 0.0, 0.0)
    assert isinstance(res, Mismatch) and res.check == "nan_inf" and res.details["nan_in_output"]
    ref, out = _pair(torch.float32)
    out.reshape(-1)[2500] = float("inf")
    res = compare([ref], [out], 0.0, 0.0)
    assert isinstance(res, Mismatch) and res.check == "nan_inf" and res.details["inf_in_output"]


def test_non_finite_reference_values_must_be_matched_exactly() -> None:
    ref, out = _pair(torch.float32)
    ref.reshape(-1)[3000] = float("-inf")
    out.reshape(-1)[3000] = float("-inf")
    assert isinstance(compare([ref], [out], 0.0, 0.0), Agreement)
    out.reshape(-1)[3000] = 0.0
    res = compare([ref], [out], 0.0, 0.0)
    assert isinstance(res, Mismatch) and res.check == "allclose"


def test_tolerance_is_the_dtype_default_unless_the_spec_sets_one() -> None:
    ref = torch.ones(2048, dtype=torch.float16)
    out = ref + 0.03  # past fp16's 1e-2 + 1e-2 * |1|, within 0.05 + 1e-2
    assert isinstance(compare([ref], [out], 0.0, 0.0), Mismatch)
    assert isinstance(compare([ref], [out], 0.05, 0.0), Agreement)


def test_shape_dtype_count_and_integer_mismatches() -> None:
    a = torch.zeros(4, 4)
    assert compare([a], [torch.zeros(4, 5)], 0, 0).check == "shape"  # type: ignore[union-attr]
    assert compare([a], [a.double()], 0, 0).check == "dtype"  # type: ignore[union-attr]
    assert compare([a], [a, a], 0, 0).check == "count"  # type: ignore[union-attr]
    ints = torch.arange(10)
    assert isinstance(compare([ints], [ints.clone()], 0, 0), Agreement)
    wrong = ints.clone()
    wrong[3] = 0
    assert compare([ints], [wrong], 0, 0).check == "allclose"  # type: ignore[union-attr]
