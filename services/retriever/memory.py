"""Context memory: turn the parent's artifacts and its relatives' outcomes into a Diagnosis.

Reports come from other services and may lack any field (an old evaluator, a profiler that
could not run a tool): they are read with ``kevolve.reports``, where a missing or mistyped
field reads as its default, and the diagnosis says what it could not see instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kevolve.nodeids import node_name
from kevolve.reports import EvaluationReport, Mismatch, ProfileReport
from kevolve.v1 import common_pb2, profile_pb2, work_pb2

V = common_pb2.Verdict


@dataclass
class ParentArtifacts:
    """What the retriever fetched for the node being expanded."""

    node: common_pb2.NodeSummary
    code: str | None = None
    eval_report: EvaluationReport | None = None
    profile_report: ProfileReport | None = None
    missing: list[str] = field(default_factory=list)   # "eval report (reports/eval/..): not found"

    def __post_init__(self) -> None:
        # Reports arrive as the JSON documents the store holds; read them once, here.
        if isinstance(self.eval_report, Mapping):
            self.eval_report = EvaluationReport.read(self.eval_report)
        if isinstance(self.profile_report, Mapping):
            self.profile_report = ProfileReport.read(self.profile_report)


# Compile/runtime error classes, first match wins: the order puts specific messages before
# generic ones ("CompilationError ... arange's range must be a power of 2" is constexpr).
_ERROR_CLASSES: list[tuple[str, re.Pattern[str]]] = [
    ("syntax", re.compile(r"SyntaxError|IndentationError|TabError|invalid syntax")),
    ("constexpr", re.compile(r"constexpr|power of 2|power of two|Conflicting meta-parameters|must be a compile-time",
                             re.I)),
    ("out_of_resources", re.compile(r"out of resource|OutOfResources|shared memory|too many registers|"
                                    r"register spill", re.I)),
    ("shape_mismatch", re.compile(r"incompatible (?:shapes|dimensions)|could not be broadcast|shape mismatch|"
                                  r"must match the size|cannot reshape|dimension mismatch|mat1 and mat2", re.I)),
    ("missing_symbol", re.compile(r"has no attribute|is not defined|NameError|AttributeError|ImportError|"
                                  r"ModuleNotFoundError|cannot import name|unexpected keyword argument")),
    ("memory_fault", re.compile(r"illegal memory access|out of bounds|segmentation fault|SIGSEGV|"
                                r"misaligned address|invalid address", re.I)),
    ("launch_arguments", re.compile(r"missing \d+ required|takes \d+ positional|got multiple values|"
                                    r"Expected all tensors to be on the same device", re.I)),
    ("triton_type", re.compile(r"TypeError|type mismatch|unsupported (?:pointer|type|operand)|dtype|"
                               r"CompilationError|cannot cast|must have the same type", re.I)),
]

_ERROR_KEYWORDS: dict[str, list[str]] = {
    "syntax": ["syntax error", "import", "NameError", "Python subset"],
    "constexpr": ["constexpr", "arange power of 2", "next_power_of_2", "meta-parameters"],
    "out_of_resources": ["out of resources", "shared memory", "registers", "num_stages", "smaller tiles"],
    "shape_mismatch": ["shape mismatch", "broadcast", "incompatible shapes", "tl.dot 2-D operands"],
    "missing_symbol": ["missing symbols", "AttributeError", "libdevice", "tl.math"],
    "memory_fault": ["illegal memory access", "mask", "int64 offsets", "out of bounds"],
    "launch_arguments": ["runtime errors at launch", "arguments", "device"],
    "triton_type": ["type errors", "dtype cast", "pointer arithmetic", "loop-carried"],
    "other": ["compile errors", "debugging"],
}

_PATTERN_KEYWORDS: dict[str, list[str]] = {
    "boundary": ["boundary tiles", "mask", "partial tile", "other identity", "cdiv"],
    "all_wrong": ["everything wrong", "strides", "indexing", "layout", "formula"],
    "drift": ["small numeric drift", "precision", "accumulate fp32", "tf32", "tolerance"],
    "nan": ["NaN", "Inf", "masked -inf", "division", "sqrt negative variance"],
    "shape": ["wrong shape", "dtype", "keepdim", "output shape"],
    "partial": ["wrong results", "indexing", "mask", "strides"],
}

_BOTTLENECK_KEYWORDS: dict[str, list[str]] = {
    "memory_bound": ["memory-bound", "bandwidth", "fewer passes", "bytes"],
    "compute_bound": ["compute-bound", "tl.dot", "tensor cores", "matmul tiles"],
    "launch_bound": ["launch overhead", "launch-bound", "fusion", "fuse kernels", "one launch"],
    "occupancy_registers": ["register pressure", "spills", "tiling", "num_warps", "occupancy"],
    "occupancy_smem": ["shared memory", "num_stages", "occupancy", "tile sizes"],
    "occupancy": ["occupancy", "registers", "num_warps", "tiling"],
    "sram_overflow": ["sram overflow", "sram", "tile size", "block size", "local memory limit"],
    "latency_bound": ["latency", "pipelining", "num_stages", "grid programs", "bytes in flight"],
    "unknown": ["tuning", "block size", "num_warps", "autotune"],
}

_VERDICT_CATEGORY = {
    V.COMPILE_ERROR: "compile_error", V.RUNTIME_ERROR: "compile_error", V.INCORRECT: "incorrect",
    V.TIMEOUT: "timeout", V.CRASHED: "crashed", V.OUT_OF_MEMORY: "crashed", V.REJECTED_STATIC: "rejected",
    V.REJECTED_RUNTIME: "rejected", V.NO_CODE: "no_code", V.SUSPICIOUS: "rejected", V.PASSED: "slow",
    V.INFRA_ERROR: "first_draft", V.VERDICT_UNSPECIFIED: "first_draft",
}


def classify_error(text: str) -> str:
    for name, pattern in _ERROR_CLASSES:
        if pattern.search(text):
            return name
    return "other"


def correctness_pattern(mismatch: Mismatch | None, reason: str = "") -> str:
    m = mismatch or Mismatch()
    if m.nan_in_output or m.inf_in_output or re.search(r"\bnan\b|\binf\b", reason, re.I):
        return "nan"
    if (m.expected_shape is not None and m.got_shape is not None and m.expected_shape != m.got_shape) \
            or "shape" in reason.lower():
        return "shape"
    if m.boundary_only:
        return "boundary"
    if m.frac_wrong is not None and m.frac_wrong >= 0.5:
        return "all_wrong"
    if m.max_abs_error is not None and m.max_abs_error < 1e-2:
        return "drift"
    return "partial" if mismatch is not None else ""


def _bottleneck(result: profile_pb2.ProfileResult, metrics: dict[str, float]) -> str:
    named = result.bottleneck.strip()
    if named and named != "unknown":
        return named
    # No verdict from the profiler: infer from the numbers it did give.
    limit, used = metrics.get("sram_limit_bytes"), metrics.get("sram_bytes_per_block")
    if limit and used and used > limit:
        return "sram_overflow"
    if metrics.get("spill_bytes", 0) > 0:
        return "occupancy_registers"
    if metrics.get("launches", 0) > 1 and 0 < metrics.get("kernel_time_us", 1e9) < 10:
        return "launch_bound"
    if metrics.get("dram_bw_frac", 0) >= 0.5:
        return "memory_bound"
    if max(metrics.get("tensor_util_frac", 0), metrics.get("sm_util_frac", 0)) >= 0.6:
        return "compute_bound"
    return named or ""


def _evidence_numbers(metrics: dict[str, float]) -> list[str]:
    parts = []
    if "dram_bw_frac" in metrics:
        parts.append(f"achieved DRAM bandwidth {metrics['dram_bw_frac']:.0%} of peak")
    if "dram_bytes_per_s" in metrics:
        parts.append(f"{metrics['dram_bytes_per_s'] / 1e9:.0f} GB/s")
    for key, label in (("kernel_time_us", "kernel time {:.1f} us"), ("launches", "{:.0f} launches"),
                       ("registers_per_thread", "{:.0f} registers/thread"), ("spill_bytes", "{:.0f} spill bytes"),
                       ("achieved_occupancy", "occupancy {:.2f}"), ("tensor_util_frac", "tensor util {:.0%}"),
                       ("sm_util_frac", "SM util {:.0%}"), ("sram_bytes_per_block", "SRAM/block {:.0f} B"),
                       ("sram_limit_bytes", "SRAM limit {:.0f} B"), ("sim_time_us", "simulated time {:.1f} us")):
        if key in metrics:
            parts.append(label.format(metrics[key]))
    return parts


def summarize_tried(nodes: list[common_pb2.NodeSummary], job_id: str = "") -> list[str]:
    """One line per earlier attempt: how it was made and how it fared, each node named within
    its job (every id of a job starts with the job's id)."""
    lines = []
    for node in nodes:
        if not node.node_id:
            continue
        how = ", ".join(f"{k}={v}" for k, v in sorted(node.tunables.items())) or "no recorded settings"
        verdict = common_pb2.Verdict.Name(node.verdict) if node.verdict else "PENDING"
        outcome = f"{verdict}" + (f" fitness {node.fitness:.3g}" if node.verdict == V.PASSED else "")
        tail = f" — {node.summary}" if node.summary else ""
        lines.append(f"{node_name(node.node_id, job_id)}: {how} -> {outcome}{tail}"[:300])
    return lines


def diagnose(parent: ParentArtifacts | None, request: work_pb2.ExpandRequest, log_chars: int = 3000) -> work_pb2.Diagnosis:
    """The structured diagnosis of the node being expanded (root expansions get "first_draft")."""
    diag = work_pb2.Diagnosis()
    history = list(request.ancestors) + list(request.siblings)
    diag.tried.extend(summarize_tried(([parent.node] if parent else []) + history, request.job_id))
    if parent is None or not parent.node.node_id:
        diag.category = "first_draft"
        diag.evidence = "no parent kernel: write the first version from the spec"
        diag.keywords.extend(["output format", "skeleton", "masking"])
        return diag
    node = parent.node
    report = parent.eval_report or EvaluationReport()
    result = report.result
    reason = result.reason or node.summary or ""
    decided_by = result.decided_by
    diag.category = _VERDICT_CATEGORY.get(node.verdict, "first_draft")
    diag.facts["verdict"] = common_pb2.Verdict.Name(node.verdict)
    if decided_by:
        diag.facts["decided_by"] = decided_by
    for item in parent.missing:
        diag.facts[f"missing:{item.split(' ', 1)[0]}"] = item
    evidence: list[str] = []

    if diag.category == "compile_error":
        text = "\n".join(x for x in (report.traceback, reason, report.log) if x)
        diag.compile_error_class = classify_error(text)
        diag.keywords.extend(_ERROR_KEYWORDS[diag.compile_error_class])
        # A Python traceback ends with the exception line; logs bury it among other output.
        evidence.append(_last_error_line(report.traceback, strict=False) or reason
                        or _last_error_line(report.log) or "build failed (no message recorded)")
    elif diag.category == "incorrect":
        diag.correctness_pattern = correctness_pattern(report.mismatch, reason)
        diag.keywords.extend(_PATTERN_KEYWORDS.get(diag.correctness_pattern, ["wrong results"]))
        facts = report.mismatch.facts() if report.mismatch is not None else {}
        for key in ("case", "frac_wrong", "max_abs_error", "boundary_only", "expected_shape", "got_shape"):
            if key in facts:
                diag.facts[key] = str(facts[key])
        frac = facts.get("frac_wrong")
        evidence.append(f"outputs differ from the reference ({diag.correctness_pattern or 'pattern unknown'})"
                        + (f": {frac:.1%} of elements wrong" if isinstance(frac, float) else "")
                        + (f", max abs error {facts['max_abs_error']}" if "max_abs_error" in facts else ""))
    elif diag.category == "rejected":
        diag.keywords.extend(["anti-cheat", "forbidden patterns", "torch compute", "fallback"])
        evidence.append(f"rejected by {decided_by or 'an integrity check'}: {reason}")
    elif diag.category == "timeout":
        diag.keywords.extend(["grid programs", "interpreter slow", "loop", "launch overhead"])
        evidence.append(f"timed out: {reason}")
    elif diag.category == "crashed":
        diag.keywords.extend(["illegal memory access", "mask", "int64 offsets", "out of resources"])
        evidence.append(f"the candidate process died: {reason}")
    elif diag.category == "no_code":
        diag.keywords.extend(["response format", "full file", "ModelNew"])
        evidence.append(f"the last reply held no usable code: {reason}")
    elif diag.category == "slow":
        _diagnose_speed(diag, node, report, parent.profile_report, evidence)

    if "sram_overflow" in f"{decided_by} {reason}" and diag.category != "slow":
        # A simulated accelerator refuses blocks larger than its local SRAM at run time.
        diag.bottleneck = "sram_overflow"
        diag.keywords.extend(_BOTTLENECK_KEYWORDS["sram_overflow"])
    if diag.category in ("compile_error", "crashed") and report.traceback:
        diag.facts["traceback_tail"] = report.traceback[-log_chars:]
    diag.evidence = "; ".join(e for e in evidence if e)[:2000]
    return diag


# FLOP per byte above which a kernel is taken as compute-bound when no profiler says so:
# the fp32 FMA ridge of current GPUs is ~20-30, the tensor-core ridge in the hundreds.
COMPUTE_INTENSITY = 64.0
AT_BANDWIDTH = 0.85  # a memory-bound kernel at this share of the copy bandwidth has no headroom


def _roofline(report: EvaluationReport) -> tuple[str, dict[str, float]]:
    """A bottleneck read off the evaluation itself, for when there is no profile.

    Speed-measuring platforms report each case's physical floor (minimal bytes / memory
    bandwidth: measured copy bandwidth on a GPU, the machine model's DRAM bandwidth on a
    simulator); with the case's time it gives the achieved share of bandwidth, and the
    spec's FLOPs per byte say which roof applies. The first timed case decides: the
    evaluator puts the production shape first unless a declared case has its sizes."""
    for index, case in enumerate(report.result.cases):
        cand = case.candidate_ms
        floor = report.case_timing(index).extra.get("floor_ms", 0.0)
        if not cand or not floor:
            continue
        moved, flops = case.bytes_moved, case.flops
        numbers = {"bandwidth_frac": floor / cand, "kernel_time_us": cand * 1e3}
        if moved > 0 and flops / moved >= COMPUTE_INTENSITY:
            return "compute_bound", {**numbers, "flops_per_byte": flops / moved}
        if floor / cand < AT_BANDWIDTH:
            return "memory_bound", numbers
        return "", numbers  # at the bandwidth limit: only moving fewer bytes helps
    return "", {}


def _bottleneck_keywords(diag: work_pb2.Diagnosis, bandwidth_frac: float | None) -> None:
    """Retrieval keywords for the diagnosed bottleneck, and the achieved share of bandwidth
    (from the profiler or the timing) as a fact; far below the roof, the access pattern."""
    diag.keywords.extend(_BOTTLENECK_KEYWORDS.get(diag.bottleneck, _BOTTLENECK_KEYWORDS["unknown"]))
    if bandwidth_frac is None:
        return
    diag.facts["achieved_bw_frac"] = f"{bandwidth_frac:.2f}"
    if diag.bottleneck == "memory_bound" and bandwidth_frac < 0.6:
        diag.keywords.extend(["coalescing", "vectorized loads", "bytes in flight"])


def _diagnose_speed(diag: work_pb2.Diagnosis, node: common_pb2.NodeSummary, report: EvaluationReport,
                    profile_report: ProfileReport | None, evidence: list[str]) -> None:
    diag.facts["fitness"] = f"{node.fitness:.4g}"
    for case in report.result.cases[:4]:
        cand, base = case.candidate_ms, case.compile_ms
        if cand and base:
            diag.facts[f"speedup:{case.name or 'case'}"] = f"{base / cand:.3g}"
    if profile_report is None:
        diag.bottleneck, numbers = _roofline(report)
        for key, value in numbers.items():
            diag.facts[key] = f"{value:.4g}"
        _bottleneck_keywords(diag, numbers.get("bandwidth_frac"))
        read = (f"; from its timing: {numbers['bandwidth_frac']:.0%} of memory bandwidth, "
                f"bottleneck {diag.bottleneck or 'none left but bytes moved'}") if numbers else ""
        evidence.append(f"passes with fitness {node.fitness:.3g}; no profile available yet{read}")
        return
    presult = profile_report.result
    metrics = dict(presult.metrics)
    diag.bottleneck = _bottleneck(presult, metrics)
    for key, value in metrics.items():
        diag.facts[key] = f"{value:.4g}"
    _bottleneck_keywords(diag, metrics.get("dram_bw_frac"))
    if metrics.get("spill_bytes", 0) > 0 and "spills" not in diag.keywords:
        diag.keywords.extend(["register pressure", "spills"])
    summary = presult.summary
    evidence.append(f"passes with fitness {node.fitness:.3g}; bottleneck {diag.bottleneck or 'unclear'}"
                    + (f" ({', '.join(_evidence_numbers(metrics))})" if metrics else "")
                    + (f"; profiler: {summary}" if summary else ""))


def _last_error_line(text: str, strict: bool = True) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.search(r"Error|error:|Exception|OutOfResources", line):
            return line[:500]
    return "" if strict or not lines else lines[-1][:500]
