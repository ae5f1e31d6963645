"""The GPU timing module's rank percentile (the spin itself needs a GPU: tests/services/evaluator/test_gpu.py)."""

from __future__ import annotations

from kevolve.exec.gputiming import percentile


def test_percentile_is_by_rank_without_interpolation() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 8.0, 7.0, 6.0, 10.0]
    assert percentile(values, 0.1) == 2.0   # rank 1 of 10: load only adds to host times
    assert percentile(values, 0.5) == 6.0   # rank 5: the upper middle, as gpu[n // 2] was
    assert percentile(values, 1.0) == 10.0  # clamped to the last rank
    assert percentile([], 0.5) == 0.0
