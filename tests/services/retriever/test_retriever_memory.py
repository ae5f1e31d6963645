"""Context memory: each failure and bottleneck pattern of a crafted report gives the right diagnosis."""

from __future__ import annotations

from typing import Any

import pytest
from retriever_helpers import eval_report, profile_report

from kevolve.v1 import common_pb2, work_pb2
from services.retriever.memory import ParentArtifacts, diagnose

V = common_pb2.Verdict


def _diag(verdict: int, report: dict[str, Any] | None = None, profile: dict[str, Any] | None = None,
          fitness: float = 0.0, request: work_pb2.ExpandRequest | None = None) -> work_pb2.Diagnosis:
    node = common_pb2.NodeSummary(node_id="n1", verdict=verdict, fitness=fitness)
    return diagnose(ParentArtifacts(node=node, code="...", eval_report=report, profile_report=profile),
                    request or work_pb2.ExpandRequest())


@pytest.mark.parametrize(("traceback", "expected"), [
    ('  File "k.py", line 12\n    x = (1 +\nSyntaxError: invalid syntax', "syntax"),
    ("triton.compiler.errors.CompilationError: at 8:13:\nValueError: arange's range must be a power of 2",
     "constexpr"),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448",
     "out_of_resources"),
    ("ValueError: incompatible shapes: (128, 64) and (64,)", "shape_mismatch"),
    ("AttributeError: module 'triton.language' has no attribute 'tanh'", "missing_symbol"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "memory_fault"),
    ("CompilationError: at 3:4: unsupported pointer arithmetic on fp32 offsets", "triton_type"),
    ("RuntimeError: something nobody anticipated", "other"),
])
def test_compile_error_class(traceback: str, expected: str) -> None:
    diag = _diag(V.COMPILE_ERROR, eval_report("COMPILE_ERROR", traceback=traceback, reason="build failed"))
    assert diag.category == "compile_error"
    assert diag.compile_error_class == expected
    assert diag.keywords, "a compile error must produce retrieval keywords"
    assert traceback.splitlines()[-1].strip()[:60] in diag.evidence


@pytest.mark.parametrize(("mismatch", "expected"), [
    ({"frac_wrong": 0.97, "max_abs_error": 3.1, "boundary_only": False}, "all_wrong"),
    ({"frac_wrong": 0.02, "max_abs_error": 0.8, "boundary_only": True}, "boundary"),
    ({"frac_wrong": 0.4, "max_abs_error": 0.0004, "boundary_only": False}, "drift"),
    ({"frac_wrong": 0.1, "max_abs_error": 1.0, "nan_in_output": True}, "nan"),
    ({"expected_shape": [64, 1000], "got_shape": [64, 1024]}, "shape"),
])
def test_correctness_pattern(mismatch: dict[str, Any], expected: str) -> None:
    diag = _diag(V.INCORRECT, eval_report("INCORRECT", reason="allclose failed", decided_by="trial:allclose",
                                          mismatch=mismatch))
    assert diag.category == "incorrect"
    assert diag.correctness_pattern == expected
    assert diag.facts["decided_by"] == "trial:allclose"


def test_memory_bound_low_bandwidth_names_the_numbers() -> None:
    profile = profile_report("memory_bound", {"dram_bw_frac": 0.41, "kernel_time_us": 85.0, "bytes_read": 6.7e7})
    diag = _diag(V.PASSED, eval_report("PASSED"), profile, fitness=0.8)
    assert diag.category == "slow"
    assert diag.bottleneck == "memory_bound"
    assert diag.facts["achieved_bw_frac"] == "0.41"
    assert "41% of peak" in diag.evidence
    assert "coalescing" in diag.keywords and "vectorized loads" in diag.keywords


def test_register_spills_inferred_when_the_profiler_names_no_bottleneck() -> None:
    profile = profile_report("", {"registers_per_thread": 255, "spill_bytes": 4096, "achieved_occupancy": 0.12})
    diag = _diag(V.PASSED, eval_report("PASSED"), profile, fitness=0.5)
    assert diag.bottleneck == "occupancy_registers"
    assert "spills" in diag.keywords
    assert "4096 spill bytes" in diag.evidence


@pytest.mark.parametrize(("bottleneck", "metrics", "keyword"), [
    ("launch_bound", {"launches": 64, "kernel_time_us": 2.5}, "launch overhead"),
    ("compute_bound", {"tensor_util_frac": 0.9}, "tensor cores"),
    ("sram_overflow", {"sram_bytes_per_block": 524288, "sram_limit_bytes": 262144}, "sram"),
])
def test_named_bottlenecks(bottleneck: str, metrics: dict[str, float], keyword: str) -> None:
    diag = _diag(V.PASSED, eval_report("PASSED"), profile_report(bottleneck, metrics), fitness=1.1)
    assert diag.bottleneck == bottleneck
    assert keyword in diag.keywords


def test_sram_overflow_inferred_from_metrics_alone() -> None:
    profile = profile_report("unknown", {"sram_bytes_per_block": 524288, "sram_limit_bytes": 262144})
    assert _diag(V.PASSED, eval_report("PASSED"), profile, fitness=1.0).bottleneck == "sram_overflow"


def test_sram_overflow_rejection_on_the_simulator() -> None:
    report = eval_report("RUNTIME_ERROR", decided_by="runtime:sram_overflow",
                         reason="block of 65536 fp32 needs 256 KiB + accumulators > 256 KiB SRAM")
    diag = _diag(V.RUNTIME_ERROR, report)
    assert diag.bottleneck == "sram_overflow"
    assert "sram" in diag.keywords


def test_speedup_facts_from_camel_case_cases() -> None:
    report = eval_report("PASSED", cases=[{"name": "default", "candidateMs": 0.5, "compileMs": 0.6}])
    diag = _diag(V.PASSED, report, None, fitness=1.2)
    assert diag.facts["speedup:default"] == "1.2"
    assert "no profile available" in diag.evidence


def test_history_lists_what_was_tried() -> None:
    request = work_pb2.ExpandRequest()
    request.ancestors.add(node_id="a1", verdict=V.PASSED, fitness=0.9,
                          tunables={"BLOCK_SIZE": "1024", "num_warps": "4"}, summary="0.31 ms vs 0.28 ms")
    request.siblings.add(node_id="s1", verdict=V.INCORRECT, tunables={"model": "m-small"}, summary="boundary")
    diag = _diag(V.PASSED, eval_report("PASSED"), None, fitness=1.0, request=request)
    tried = "\n".join(diag.tried)
    assert "BLOCK_SIZE=1024, num_warps=4 -> PASSED fitness 0.9 — 0.31 ms vs 0.28 ms" in tried
    assert "model=m-small -> INCORRECT — boundary" in tried


def test_tolerates_reports_with_missing_and_mistyped_fields() -> None:
    node = common_pb2.NodeSummary(node_id="n1", verdict=V.INCORRECT, summary="allclose failed")
    weird = {"result": "not a dict", "mismatch": ["nope"], "traceback": None}
    diag = diagnose(ParentArtifacts(node=node, eval_report=weird, missing=["profile_report (k): not found"]),
                    work_pb2.ExpandRequest())
    assert diag.category == "incorrect"
    assert diag.facts["missing:profile_report"] == "profile_report (k): not found"
    passed = common_pb2.NodeSummary(node_id="n2", verdict=V.PASSED, fitness=1.0)
    odd_profile = {"result": {"metrics": {"dram_bw_frac": "n/a", "spill_bytes": "12"}}}
    assert diagnose(ParentArtifacts(node=passed, profile_report=odd_profile),
                    work_pb2.ExpandRequest()).bottleneck == "occupancy_registers"


def test_root_expansion_is_a_first_draft() -> None:
    diag = diagnose(None, work_pb2.ExpandRequest())
    assert diag.category == "first_draft"
    assert diag.keywords


def _timed(candidate_ms: float, floor_ms: float, bytes_moved: float, flops: float) -> dict[str, Any]:
    """An evaluation report as the CUDA timer leaves it: the case, and its floor in the timing."""
    report = eval_report("PASSED", cases=[{"name": "default", "candidateMs": candidate_ms, "compileMs": 0.06,
                                           "bytesMoved": bytes_moved, "flops": flops}])
    report["timing"] = {"0": {"candidate_ms": candidate_ms, "extra": {"floor_ms": floor_ms}}}
    return report


def test_without_a_profile_a_slow_kernel_far_from_bandwidth_is_memory_bound() -> None:
    diag = _diag(V.PASSED, _timed(0.05, 0.022, bytes_moved=6.7e7, flops=3e7), None, fitness=1.2)
    assert diag.bottleneck == "memory_bound"
    assert diag.facts["achieved_bw_frac"] == "0.44"
    assert "44% of memory bandwidth" in diag.evidence
    assert "coalescing" in diag.keywords  # under 60%: the access pattern is suspect


def test_without_a_profile_high_arithmetic_intensity_is_compute_bound() -> None:
    diag = _diag(V.PASSED, _timed(0.2, 0.02, bytes_moved=5e7, flops=6.9e10), None, fitness=0.8)
    assert diag.bottleneck == "compute_bound"
    assert float(diag.facts["flops_per_byte"]) == pytest.approx(1380)


def test_without_a_profile_a_kernel_at_the_bandwidth_limit_has_no_tiling_bottleneck() -> None:
    diag = _diag(V.PASSED, _timed(0.05, 0.046, bytes_moved=1.3e8, flops=3e7), None, fitness=1.0)
    assert diag.bottleneck == ""
    assert "92% of memory bandwidth" in diag.evidence and "none left but bytes moved" in diag.evidence
