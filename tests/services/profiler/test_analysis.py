"""Observations -> ProfileResult fields: only measured metrics, bottlenecks only with evidence."""

from __future__ import annotations

from typing import Any

from services.profiler import analysis


def _launch(name: str, programs: int, loaded: int, stored: int) -> dict[str, Any]:
    return {"name": name, "grid": [programs, 1, 1], "programs": programs, "bytes_loaded": loaded,
            "bytes_stored": stored}


def test_many_launches_of_tiny_grids_are_launch_bound() -> None:
    launches = [_launch("step", 1, 64, 64) for _ in range(12)]
    observed = {"launches": launches, "kernels": [{"name": "step", "launches": 12, "grids": [[1, 1, 1]]}],
                "input_bytes": 64, "output_bytes": 64}
    a = analysis.interpreter(observed)
    assert a.bottleneck == "launch_bound" and "12 launches of at most 1 programs" in a.summary
    assert a.metrics == {"launches": 12.0, "kernel_count": 1.0, "bytes_read": 768.0, "bytes_written": 768.0}


def test_one_big_launch_claims_no_bottleneck_on_the_interpreter() -> None:
    observed = {"launches": [_launch("k", 512, 4096, 4096)], "kernels": [{"name": "k", "launches": 1,
                                                                        "grids": [[512, 1, 1]]}],
                "input_bytes": 4096, "output_bytes": 4096}
    a = analysis.interpreter(observed)
    assert a.bottleneck == "unknown"  # the interpreter cannot tell memory- from compute-bound
    assert "kernel_time_us" not in a.metrics and a.unavailable


def test_mtia_sim_without_triton_launches_estimates_nothing() -> None:
    a = analysis.mtia_sim({"launches": [], "kernels": [], "baseline_estimate": {"time_us": 5.0}}, 262144)
    assert a.bottleneck == "unknown" and "sim_time_us" not in a.metrics
    assert "no Triton kernel" in a.summary
