"""Trial input variants: they change the data a kernel sees, never the spec's contract."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from services.evaluator.sandboxed.inputs import VARIANTS, make_inputs, sorted_rows


def _spec(*tensors: torch.Tensor) -> SimpleNamespace:
    return SimpleNamespace(get_inputs=lambda: [t.clone() for t in tensors])


@pytest.mark.parametrize("variant", sorted(set(VARIANTS)))
def test_sorted_rows_stay_sorted_under_every_variant(variant: str) -> None:
    borders = torch.cumsum(torch.rand(16, 64) + 0.01, dim=1)   # one sorted row per feature
    x = torch.randn(128, 16)
    got_borders, got_x = make_inputs(_spec(borders, x), seed=7, variant=variant, device="cpu")
    assert sorted_rows(got_borders)
    if variant == "sparse":
        # the variant still happened: a tenth of the borders are now zeros, sorted into place
        assert 0.05 < float((got_borders == 0).float().mean()) < 0.15
        assert float((got_x == 0).float().mean()) > 0.05


def test_unsorted_data_is_not_sorted_by_the_variant() -> None:
    x = torch.randn(32, 64)
    (got,) = make_inputs(_spec(x), seed=3, variant="sparse", device="cpu")
    assert not sorted_rows(got)
    kept = got != 0
    assert torch.equal(got[kept], x[kept])  # zeros where the variant put them, the rest in place


def test_short_rows_are_not_taken_for_sorted_data() -> None:
    # rows of 2 are sorted half the time by chance; they keep the plain variant
    assert not sorted_rows(torch.tensor([[0.1, 0.2], [0.3, 0.4]]))
    assert sorted_rows(torch.arange(8.0))
    assert not sorted_rows(torch.tensor([float("nan")] * 8))


def test_probabilities_stay_probabilities_and_still_change() -> None:
    # binary cross-entropy rejects targets outside [0, 1]: a shifted trial used to make a
    # valid spec's reference raise
    target = torch.rand(64, 32)
    for seed in range(20):
        (got,) = make_inputs(_spec(target), seed=seed, variant="affine", device="cpu")
        assert 0.0 <= float(got.min()) and float(got.max()) <= 1.0
        assert not torch.equal(got, target)
    import torch.nn.functional as F

    (got,) = make_inputs(_spec(target), seed=5, variant="affine", device="cpu")
    F.binary_cross_entropy(torch.sigmoid(torch.randn(64, 32)), got)  # does not raise


def test_non_negative_data_stays_non_negative_and_signed_data_may_shift_down() -> None:
    counts = torch.rand(64, 32) * 5 + 1.5   # non-negative, not in [0, 1]
    signed = torch.randn(64, 32)
    shifted_down = False
    for seed in range(20):
        got_counts, got_signed = make_inputs(_spec(counts, signed), seed=seed, variant="affine", device="cpu")
        assert float(got_counts.min()) >= 0.0
        shifted_down |= float(got_signed.mean()) < -0.5
    assert shifted_down  # the plain affine variant still reaches all-negative-ish data
