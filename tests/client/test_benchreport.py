"""The benchmark report on synthetic results: totals, honesty rules, plots, JSON round trip."""

from __future__ import annotations

import json
import math
import re
from xml.etree import ElementTree
from pathlib import Path

import pytest

from kevolve.client.benchreport import (BenchResult, CaseTiming, SpecResult, load_isolated_baselines, render_html,
                                 render_markdown, spec_row, totals, write_report)


def _spec(name: str, correct: bool, compile_ms: float, kernel_ms: float, eager_ms: float = 3.0,
          moved: float = 1.5e9, flops: float = 1e9, candidates: int = 10) -> SpecResult:
    case = CaseTiming(name="default", sizes={"n": 1}, passed=correct, candidate_ms=kernel_ms,
                      eager_ms=eager_ms, compile_ms=compile_ms, bytes_moved=moved, flops=flops)
    return SpecResult(spec=name, job_id=f"job-{name}", state="SUCCEEDED" if correct else "FAILED",
                      end_reason="" if correct else "budget exhausted",
                      best_verdict="PASSED" if correct else "INCORRECT", correct=correct, speed_measured=True,
                      cases=[case], main_case="default", candidates=candidates,
                      evaluated=candidates, passed=3 if correct else 0, wall_s=100.0, device_s=40.0,
                      prompt_tokens=1000, completion_tokens=500, cost_usd=0.25)


def _gpu_result() -> BenchResult:
    return BenchResult(platform="cuda", suite="bench/suite", budget=16, policy="greedy", device="NVIDIA H100",
                       copy_bw_gbs=3000.0, peak_tflops=989.0, specs=[
                           _spec("fast2x", True, compile_ms=2.0, kernel_ms=1.0),
                           _spec("fast125", True, compile_ms=1.0, kernel_ms=0.8),
                           _spec("slower", True, compile_ms=1.0, kernel_ms=1.25),
                           _spec("wrong", False, compile_ms=1.0, kernel_ms=0.1),
                           # 1e12 FLOPs over 1e9 bytes = 1000 FLOP/byte, above the ridge (989e12/3e12 = 330).
                           _spec("gemm", True, compile_ms=2.0, kernel_ms=2.0, moved=1e9, flops=1e12),
                       ])


def test_totals_fast_p_and_geomean() -> None:
    t = totals(_gpu_result())
    assert t.specs == 5 and t.correct == 4 and t.correctness_rate == pytest.approx(0.8)
    # fast_p counts over ALL specs, requires correctness: the incorrect 10x "kernel" does not count.
    assert t.fast_1 == pytest.approx(2 / 5)       # fast2x, fast125 (gemm at exactly 1.0x is not faster)
    assert t.fast_1_5 == pytest.approx(1 / 5)     # fast2x only
    assert t.geomean_speedup == pytest.approx((2.0 * 1.25 * 0.8 * 1.0) ** (1 / 4))
    # With fallback, the slower and the wrong spec both count as PyTorch: 1.0x.
    assert t.geomean_with_fallback == pytest.approx((2.0 * 1.25) ** (1 / 5))
    assert t.candidates == 50 and t.wall_s == 500.0 and t.device_s == 200.0 and t.tokens == 7500
    assert t.cost_usd == pytest.approx(1.25)


def test_bandwidth_and_flops_fractions() -> None:
    result = _gpu_result()
    row = spec_row(result, result.specs[0])
    assert row.bw_frac == pytest.approx(1.5e9 / 1e-3 / 3000e9)   # 50% of copy bandwidth
    assert not row.compute_bound and row.flops_frac is None
    gemm = spec_row(result, result.specs[4])
    assert gemm.compute_bound and gemm.flops_frac == pytest.approx(1e12 / 2e-3 / 989e12)
    result.copy_bw_gbs = None  # not measured: no fraction is invented
    assert spec_row(result, result.specs[0]).bw_frac is None


def test_slower_and_incorrect_specs_fall_back_to_pytorch() -> None:
    md = render_markdown(_gpu_result())
    slower = next(line for line in md.splitlines() if "`slower`" in line)
    assert "falls back to PyTorch (best kernel 1.25 ms is not faster than torch.compile 1 ms)" in slower
    wrong = next(line for line in md.splitlines() if line.startswith("| `wrong`"))
    assert "falls back to PyTorch (no correct kernel: budget exhausted)" in wrong
    # Its time is never shown as a kernel time.
    assert "10.00x" not in wrong and "0.1" not in wrong.split("|")[5]
    fast = next(line for line in md.splitlines() if line.startswith("| `fast2x`"))
    assert "2.00x" in fast and "50%" in fast
    shape = next(line for line in md.splitlines() if line.startswith("| `wrong` | default"))
    assert "0.1" not in shape and shape.endswith("| PyTorch (fallback) |")
    assert "fast_1 (correct and faster than torch.compile) | 40%" in md
    assert "fast_1.5 (correct and >1.5x torch.compile) | 20%" in md


def test_eager_faster_than_the_kernel_is_said() -> None:
    result = _gpu_result()
    result.specs[1].cases[0].eager_ms = 0.5   # kernel 0.8 ms beats compile (1.0) but not eager (0.5)
    row = spec_row(result, result.specs[1])
    assert row.uses_kernel and "eager PyTorch is faster still (0.5 ms)" in row.note
    assert "faster still" not in spec_row(result, result.specs[0]).note


def test_cpu_report_has_correctness_only() -> None:
    result = _gpu_result()
    result.platform, result.copy_bw_gbs, result.peak_tflops = "cpu", None, None
    # Even if timings leaked into the data, a cpu report must never show a speed.
    md = render_markdown(result)
    assert "no speed is reported" in md
    for forbidden in ("ms", "vs compile", "fast_1", "geomean", "%copy BW", "2.00x"):
        assert forbidden not in md, forbidden
    t = totals(result)
    assert not t.speed and t.fast_1 is None and t.geomean_speedup is None
    assert "| `fast2x` | yes | PASSED | 10 | correct (no speed on this platform) |" in md
    page = render_html(result)
    assert "<svg" in page and "speedup" not in page.lower()


def test_html_contains_the_plots() -> None:
    page = render_html(_gpu_result())
    charts = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(charts) == 4   # vs torch.compile, vs eager, % copy bandwidth, % peak FLOP/s (gemm)
    speed = charts[0]
    assert "Speedup of the best kernel over torch.compile" in speed
    assert speed.count("<rect") == 4           # the incorrect spec has no bar ...
    assert "n/a" in speed                       # ... it says n/a instead
    assert "stroke-dasharray" in speed          # the 1.0x reference line
    assert "fast2x: 2x" in speed and "#999999" in speed   # the slower spec is drawn as a fallback
    for chart in charts:  # well-formed SVG, so browsers draw it rather than show an error
        ElementTree.fromstring(chart)


def test_names_are_escaped_in_html() -> None:
    result = _gpu_result()
    result.specs[0].spec = "a<b>&c"
    page = render_html(result)
    assert "a<b>" not in page and "a&lt;b&gt;&amp;c" in page
    for chart in re.findall(r"<svg.*?</svg>", page, re.S):
        ElementTree.fromstring(chart)


def test_json_round_trip_and_files(tmp_path: Path) -> None:
    result = _gpu_result()
    paths = write_report(result, tmp_path)
    assert {p.name for p in paths.values()} == {"suite_cuda.json", "suite_cuda.md", "suite_cuda.html"}
    again = BenchResult.from_json(paths["json"].read_text())
    assert again == result
    assert render_markdown(again) == paths["md"].read_text()
    assert math.isclose(totals(again).geomean_speedup or 0, totals(result).geomean_speedup or 1)


def test_isolated_baselines_prefer_gpu_time_and_reject_other_files(tmp_path: Path) -> None:
    good = tmp_path / "suite_baselines_gpu.json"
    good.write_text(json.dumps({"rows": [
        {"spec": "a", "case": "default", "compile_ms": 0.095, "compile_gpu_ms": 0.034},  # do_bench + GPU time
        {"spec": "b", "case": "default", "compile_ms": 0.05},                            # an older file's row
        {"spec": "c", "case": "default", "compile_error": "RuntimeError: boom"},          # no time: skipped
    ]}))
    assert load_isolated_baselines(good) == {"a/default": 0.034, "b/default": 0.05}
    bad = tmp_path / "suite_cuda.json"
    bad.write_text(json.dumps({"specs": []}))
    with pytest.raises(ValueError, match="not a baselines file"):
        load_isolated_baselines(bad)


def test_a_kernel_is_credited_with_the_smaller_of_its_in_run_and_isolated_speedups() -> None:
    result = _gpu_result()
    # alone, torch.compile took 1.2 ms for fast2x (in run 2.0 ms) and 1.5 ms for fast125 (in run 1.0 ms)
    result.isolated_compile_ms = {"fast2x/default": 1.2, "fast125/default": 1.5}
    rows = {r.spec: r for r in (spec_row(result, s) for s in result.specs)}
    assert rows["fast2x"].credited == pytest.approx(1.2)      # 1.2 / 1.0, not 2.0 / 1.0
    assert rows["fast125"].credited == pytest.approx(1.25)    # in run 1.0 / 0.8 is the smaller


def test_baselines_of_other_specs_are_neither_mentioned_nor_shown() -> None:
    """A corpus run handed the suite's isolated baselines (none of its specs among them): its
    report does not say its kernels were credited against them, nor show their empty columns."""
    result = _gpu_result()
    result.isolated_compile_ms, result.isolated_source = {"other/default": 1.0}, "suite_baselines_x.json"
    text = render_markdown(result)
    assert "measured alone" not in text and "compile alone" not in text
    result.isolated_compile_ms["fast2x/default"] = 1.2
    text = render_markdown(result)
    assert "measured alone on this GPU model (suite_baselines_x.json)" in text and "compile alone ms" in text


def test_cpu_runs_with_different_concurrency_merge_and_gpu_runs_do_not() -> None:
    def run(platform: str, concurrency: str, spec: str) -> BenchResult:
        return BenchResult(platform=platform, suite="corpus", budget=2, policy="greedy",
                           settings={"KEVOLVE_EVALUATOR_CONCURRENCY": concurrency},
                           specs=[SpecResult(spec=spec, correct=True, state="SUCCEEDED")])

    merged = run("cpu", "2", "a").merged(run("cpu", "14", "b"))
    assert [s.spec for s in merged.specs] == ["a", "b"]
    # The report says every value a setting had across the parts.
    assert merged.settings == {"KEVOLVE_EVALUATOR_CONCURRENCY": "2 | 14"}
    with pytest.raises(ValueError, match="different settings"):
        run("cuda", "2", "a").merged(run("cuda", "14", "b"))


def test_a_cpu_report_of_parts_at_two_budgets_says_which_specs_ran_at_which() -> None:
    def run(platform: str, budget: int, *specs: str) -> BenchResult:
        return BenchResult(platform=platform, suite="corpus", budget=budget, policy="greedy",
                           specs=[SpecResult(spec=s, correct=True, state="SUCCEEDED") for s in specs])

    merged = run("cpu", 2, "a", "b").merged(run("cpu", 1, "c"))
    assert {s.spec: s.budget for s in merged.specs} == {"a": 2, "b": 2, "c": 1}
    header = render_markdown(merged).splitlines()[3]
    assert "budget 2 candidates per spec (1 spec at budget 1)" in header
    # Speeds found under different budgets are different searches': GPU parts do not merge.
    with pytest.raises(ValueError, match="different budget"):
        run("cuda", 2, "a").merged(run("cuda", 1, "c"))


def test_the_call_loop_view_is_reported_beside_gpu_time() -> None:
    # fast2x wins in GPU time but its wrapper's host work loses it back to back; fast125 holds.
    result = _gpu_result()
    loops = {"fast2x": (0.050, 0.040), "fast125": (0.030, 0.045), "slower": (0.050, 0.050), "gemm": (2.0, 2.0)}
    for spec in result.specs:
        if spec.spec in loops:
            spec.cases[0].candidate_loop_ms, spec.cases[0].compile_loop_ms = loops[spec.spec]
    t = totals(result)
    assert t.loop_specs == 5                         # the wrong spec falls back in both views
    assert t.fast_1_loop == pytest.approx(1 / 5)     # fast125 only
    assert t.geomean_loop_with_fallback == pytest.approx(1.5 ** (1 / 5))
    assert t.fast_1 == pytest.approx(2 / 5)          # GPU-time totals unchanged
    row = spec_row(result, result.specs[0])
    assert row.speedup_loop == pytest.approx(0.8) and "0.80x in the call loop" in row.note
    md = render_markdown(result)
    assert "vs compile, call loop" in md and "call loop, host included (5 specs): fast_1 | 20%" in md
    page = render_html(result)
    assert "vs compile, call loop" in page and "back-to-back loop, host included" in page


def test_a_report_without_call_loops_shows_no_loop_figures() -> None:
    t = totals(_gpu_result())
    assert t.loop_specs == 0 and t.fast_1_loop is None
    assert "call loop" not in render_markdown(_gpu_result())


def test_every_credited_kernel_states_the_precision_of_its_products(tmp_path: Path) -> None:
    result = _gpu_result()
    result.specs[4].precision = "ieee"                        # the gemm: full float32 products
    result.specs[0].precision, result.specs[0].tf32_allowed = "tf32", True
    assert "tl.dot precision ieee" in spec_row(result, result.specs[4]).note
    assert "tl.dot precision tf32 (the job allows TF32)" in spec_row(result, result.specs[0]).note
    assert "precision" not in spec_row(result, result.specs[1]).note   # no products: nothing to state
    assert "tl.dot precision ieee" in render_markdown(result)
    again = BenchResult.from_json(write_report(result, tmp_path)["json"].read_text())
    assert again.specs[0].precision == "tf32" and again.specs[0].tf32_allowed
