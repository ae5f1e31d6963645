"""The mtia-sim timing platform and its machine model, on real kernels under the interpreter."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from kevolve import specfile
from kevolve.config import REPO_ROOT
from kevolve.exec.interp_trace import InterpTrace
from kevolve.exec.mtia_sim import MachineModelError, aten_counter, estimate, load_machine
from kevolve.platforms import get_platform
from services.evaluator.sandboxed.guards import GuardViolation
from services.evaluator.sandboxed.platforms import TimingContext, create_timing_platform

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="needs TRITON_INTERPRET=1")

DATA = REPO_ROOT / "tests" / "services" / "profiler" / "data"
MACHINE = REPO_ROOT / "kb" / "hardware" / "mtia-sim" / "machine.toml"


def _load(path: Path, name: str, sizes: dict[str, int] | None = None) -> Any:
    return specfile.load_module(path.read_text(), name, sizes, str(path))


def _context(spec: Any, candidate: Any, init: list[Any]) -> TimingContext:
    model = candidate.ModelNew(*init)

    def make_inputs(i: int) -> list[torch.Tensor]:
        torch.manual_seed(100 + i)
        return spec.get_inputs()

    def run_candidate(values: Sequence[torch.Tensor]) -> Any:
        return model(*values)

    return TimingContext(case="default", sizes={}, device="cpu", forward=run_candidate, run_candidate=run_candidate,
                         make_inputs=make_inputs, make_reference=lambda: spec.Model(*init), bytes_moved=0.0)


def test_fused_candidate_is_estimated_faster_than_unfused_and_the_baseline() -> None:
    machine = load_machine(MACHINE)
    spec = _load(REPO_ROOT / "examples" / "gelu_scale_add.py", "sim_gelu_spec", {"rows": 64, "cols": 1024})
    x, y = spec.get_inputs()
    results = {}
    for variant in ("gelu_fused", "gelu_unfused"):
        model = _load(DATA / f"{variant}.py", f"sim_{variant}").ModelNew(0.75)
        with InterpTrace() as trace:
            out = model(x, y)
        torch.testing.assert_close(out, spec.Model(0.75)(x, y), atol=1e-5, rtol=1e-5)
        results[variant] = (estimate(machine, trace.launches), trace)
    with aten_counter() as counter:
        spec.Model(0.75)(x, y)
    baseline = estimate(machine, counter.to_launches(machine))
    fused, fused_trace = results["gelu_fused"]
    unfused, unfused_trace = results["gelu_unfused"]
    # Fusion removes two launches and two round trips through DRAM.
    assert len(fused.launches) == 1 and len(unfused.launches) == 3
    t = 64 * 1024 * 4  # bytes of one fp32 tensor
    assert (fused_trace.bytes_loaded, fused_trace.bytes_stored) == (2 * t, t)
    assert (unfused_trace.bytes_loaded, unfused_trace.bytes_stored) == (4 * t, 3 * t)
    assert fused.time_us < unfused.time_us < baseline.time_us * 1.5
    assert fused.time_us < baseline.time_us
    assert [op["op"] for op in counter.ops] == ["gelu", "mul", "add"]
    assert fused.violations == [] and 0 < fused.utilization()["util_pe"] <= 1


def test_block_too_large_for_sram_is_a_violation_naming_kernel_and_limit() -> None:
    machine = load_machine(MACHINE)
    spec = _load(DATA / "softmax_wide.py", "sim_wide_spec")
    model = _load(DATA / "softmax_huge_block.py", "sim_huge").ModelNew()
    (x,) = spec.get_inputs()
    with InterpTrace() as trace:
        out = model(x)
    torch.testing.assert_close(out, torch.softmax(x, -1))  # correct, just does not fit the chip
    est = estimate(machine, trace.launches)
    assert est.bottleneck == "sram_overflow"
    assert "softmax_kernel" in est.violations[0] and "32768" in est.violations[0]
    assert str(machine.sram_bytes) in est.violations[0]
    assert est.sram_bytes_per_block > machine.sram_bytes


def test_bad_machine_model_is_rejected_with_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "machine.toml"
    bad.write_text(MACHINE.read_text().replace("clock_ghz = 1.35", "clock_ghz = -1"))
    with pytest.raises(MachineModelError, match="pe.clock_ghz"):
        load_machine(bad)
    with pytest.raises(MachineModelError, match="does not exist"):
        load_machine(tmp_path / "missing.toml")


def test_platform_plugin_reports_simulated_times_and_fails_sram_overflow() -> None:
    platform = create_timing_platform(get_platform(REPO_ROOT / "kb", "mtia-sim"))
    assert platform.speed == "simulated" and platform.device == "cpu"
    assert "mtia-sim-v1" in platform.environment()["device"]

    spec = _load(REPO_ROOT / "examples" / "gelu_scale_add.py", "plug_gelu_spec", {"rows": 32, "cols": 1024})
    fused = _load(DATA / "gelu_fused.py", "plug_fused")
    timing = platform.time_case(_context(spec, fused, [0.75]))
    assert timing.simulated is True and timing.calls == 1
    assert 0 < timing.candidate_ms < timing.eager_ms  # fused kernel beats three eager aten launches
    assert timing.compile_ms == 0  # no torch.compile on this chip: the eager estimate is the baseline
    assert timing.extra["launches"] == 1 and timing.extra["baseline_launches"] == 3
    assert timing.extra["bytes_read"] == 2 * 32 * 1024 * 4 and timing.extra["bytes_written"] == 32 * 1024 * 4

    wide = _load(DATA / "softmax_wide.py", "plug_wide_spec")
    huge = _load(DATA / "softmax_huge_block.py", "plug_huge")
    with pytest.raises(GuardViolation) as info:
        platform.time_case(_context(wide, huge, []))
    assert info.value.rule == "sram_overflow" and "256 KiB" not in info.value.reason
    assert "exceeds the 262144 B of SRAM per PE" in info.value.reason


def test_evaluator_harness_scores_a_fused_kernel_by_simulated_speedup(tmp_path: Path) -> None:
    """The whole evaluation path of the mtia-sim pool: sandboxed child, correctness, simulated timing."""
    from services.evaluator.config import EvaluatorSettings
    from services.evaluator.harness import Harness
    from services.evaluator.plan import EvalJob

    harness = Harness(EvaluatorSettings(platform="mtia-sim", scratch_dir=tmp_path, timeout_s=120, memory_mb=4096),
                      REPO_ROOT / "kb")
    job = EvalJob(spec_source=(REPO_ROOT / "examples" / "gelu_scale_add.py").read_text(),
                  candidate_source=(DATA / "gelu_fused.py").read_text(),
                  platform=get_platform(REPO_ROOT / "kb", "mtia-sim"), seed=20261121)
    result = harness.evaluate(job).result
    assert result.verdict == 1, result.reason  # PASSED
    (case,) = result.cases
    assert case.simulated and case.compile_ms == 0 and case.candidate_ms < case.eager_ms
    assert result.fitness == pytest.approx(case.eager_ms / case.candidate_ms)
    assert "mtia-sim-v1" in result.environment["device"]


def test_knowledge_base_example_kernel_is_correct_and_fits_sram(tmp_path: Path) -> None:
    """The chunked softmax in kb/hardware/mtia-sim/examples.md is what LLMs are shown: it must work."""
    import re

    doc = (REPO_ROOT / "kb" / "hardware" / "mtia-sim" / "examples.md").read_text()
    match = re.search(r"```python\n(.*?)```", doc, re.S)
    assert match, "examples.md lost its python example"
    path = tmp_path / "kb_example.py"
    path.write_text(match.group(1))
    model = _load(path, "kb_example").ModelNew()
    machine = load_machine(MACHINE)
    x = torch.randn(2, 20000) * 4
    with InterpTrace() as trace:
        out = model(x)
    torch.testing.assert_close(out, torch.softmax(x, -1))
    est = estimate(machine, trace.launches)
    assert est.violations == [] and est.sram_bytes_per_block <= machine.sram_bytes
    with aten_counter() as counter:
        torch.softmax(x, -1)
    # As the page says: two rows keep two PEs busy, slower than the baseline spread over all PEs.
    assert est.time_us > 2 * estimate(machine, counter.to_launches(machine)).time_us
