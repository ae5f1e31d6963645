"""Turn what a profiling child observed into ProfileResult fields: metrics, bottleneck, summary.

Only numbers a tool really produced become metrics (names from docs/architecture.md). The
interpreter gives counts, never times; MTIA-sim gives estimates (``sim_time_us``), never
measurements; the GPU gives measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Interpreter evidence for launch_bound: many launches whose grids are too small to fill
# even a small GPU (a few dozen SMs): the fixed cost per launch dominates.
MANY_LAUNCHES = 8
TINY_GRID = 16


@dataclass
class Analysis:
    bottleneck: str = "unknown"
    summary: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def _fmt_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def interpreter(observed: dict[str, Any]) -> Analysis:
    """cpu pool: what the interpreter run shows (launches, grids, bytes), no times."""
    a = Analysis(tools=["interpreter"], details={"observed": observed})
    a.unavailable.append("timing: the Triton interpreter on the CPU says nothing about kernel speed")
    launches = observed.get("launches")
    minimal = float(observed.get("input_bytes", 0) + observed.get("output_bytes", 0))
    if launches is None:  # the reference itself was profiled
        ops = observed.get("reference_ops", [])
        read = sum(op["bytes_read"] for op in ops)
        written = sum(op["bytes_written"] for op in ops)
        a.metrics.update(launches=float(len(ops)), kernel_count=float(len({op["op"] for op in ops})),
                         bytes_read=float(read), bytes_written=float(written))
        a.summary = (f"reference: {len(ops)} aten ops ({', '.join(op['op'] for op in ops[:8])}), each a pass "
                     f"over memory: read {_fmt_bytes(read)}, wrote {_fmt_bytes(written)} "
                     f"(minimal {_fmt_bytes(minimal)})")
        return a
    kernels = observed.get("kernels", [])
    read = sum(rec["bytes_loaded"] for rec in launches)
    written = sum(rec["bytes_stored"] for rec in launches)
    a.metrics.update(launches=float(len(launches)), kernel_count=float(len(kernels)),
                     bytes_read=float(read), bytes_written=float(written))
    if not launches:
        a.summary = "the candidate launched no Triton kernel under the interpreter"
        return a
    grids = "; ".join(f"{k['name']} x{k['launches']} grid {k['grids'][0]}" for k in kernels[:4])
    parts = [f"{len(launches)} launches of {len(kernels)} kernels ({grids})",
             f"read {_fmt_bytes(read)}, wrote {_fmt_bytes(written)}"]
    input_bytes = float(observed.get("input_bytes", 0))
    if input_bytes and read > 1.5 * input_bytes:
        parts.append(f"reads {read / input_bytes:.1f}x the input bytes (more than one pass over the inputs)")
    elif minimal:
        parts.append(f"minimal traffic (inputs + outputs) {_fmt_bytes(minimal)}")
    programs = [rec["programs"] for rec in launches]
    if len(launches) >= MANY_LAUNCHES and max(programs) <= TINY_GRID:
        a.bottleneck = "launch_bound"
        parts.append(f"launch_bound: {len(launches)} launches of at most {max(programs)} programs each")
    a.summary = "interpreter: " + "; ".join(parts) + " (no timing on the cpu interpreter)"
    return a


def mtia_sim(observed: dict[str, Any], sram_limit: int) -> Analysis:
    """mtia-sim pool: the machine model's estimate, per-unit utilization and the limiting resource."""
    a = Analysis(tools=["interpreter", "mtia-sim"], details={"observed": observed})
    base = observed.get("baseline_estimate", {})
    est = observed.get("estimate")
    if est is None:  # profiling the reference
        est = base
        a.summary = "reference (eager aten ops) on MTIA-sim: "
    else:
        a.summary = "MTIA-sim estimate: "
    launches = observed.get("launches")
    if launches is not None and not launches:
        a.summary = ("the candidate launched no Triton kernel under the interpreter: "
                     "MTIA-sim has nothing to estimate")
        a.metrics.update(launches=0.0, kernel_count=0.0)
        return a
    if launches is not None:
        a.metrics.update(bytes_read=float(sum(r["bytes_loaded"] for r in launches)),
                         bytes_written=float(sum(r["bytes_stored"] for r in launches)),
                         kernel_count=float(len(observed.get("kernels", []))))
    a.metrics.update(sim_time_us=float(est["time_us"]), launches=float(len(est["launches"])),
                     sram_bytes_per_block=float(est["sram_bytes_per_block"]),
                     sram_limit_bytes=float(sram_limit))
    for key in ("util_dram", "util_vector", "util_sfu", "util_pe"):
        if key in est["utilization"]:
            a.metrics[key] = float(est["utilization"][key])
    a.bottleneck = est["bottleneck"]
    util = est["utilization"]
    text = (f"{est['time_us']:.2f} us simulated, {a.bottleneck}; DRAM {util.get('util_dram', 0):.0%}, "
            f"vector {util.get('util_vector', 0):.0%}, SFU {util.get('util_sfu', 0):.0%}, "
            f"PE slots {util.get('util_pe', 0):.0%}")
    if base and est is not base and est["time_us"] > 0:
        text += f"; baseline {base['time_us']:.2f} us ({base['time_us'] / est['time_us']:.2f}x)"
    if est["violations"]:
        text += "; " + est["violations"][0]
    slowest = max(est["launches"], key=lambda e: e["time_us"], default=None)
    if slowest is not None and not est["violations"]:
        text += (f"; slowest launch {slowest['name']} ({slowest['programs']} programs, "
                 f"{slowest['time_us']:.2f} us, {slowest['limiter']})")
    a.summary += text
    return a


def cuda(observed: dict[str, Any], ncu_kernels: list[Any] | None, ncu_problem: str | None) -> Analysis:
    """cuda pool: torch.profiler kernel times, plus ncu's roofline reading when ncu could run."""
    from services.profiler import ncu

    a = Analysis(tools=["torch.profiler"], details={"torch_profiler": observed})
    kernels = observed.get("kernels", [])
    if kernels:
        total = sum(k["device_time_us_total"] for k in kernels)
        launches = sum(k["launches"] for k in kernels)
        a.metrics.update(kernel_time_us=float(total), launches=float(launches),
                         kernel_count=float(len(kernels)))
        lead = kernels[0]
        a.summary = (f"{len(kernels)} kernels, {launches:g} launches per forward, {total:.1f} us of GPU time "
                     f"(top: {lead['name']} {lead['device_time_us_per_launch']:.1f} us per launch)")
        if launches and total / launches < ncu.LAUNCH_BOUND_US:
            a.bottleneck = "launch_bound"
    else:
        a.summary = "torch.profiler saw no GPU kernel in the forward"
    if ncu_problem:
        a.unavailable.append(ncu_problem)
    if ncu_kernels:
        roof = ncu.classify(ncu_kernels)
        a.tools.append("ncu")
        # Per-forward GPU time stays torch.profiler's; ncu's per-launch time is kept in details.
        a.metrics.update({k: v for k, v in roof.metrics.items()
                          if k not in ("kernel_time_us", "fp32_flops_per_s")})
        a.bottleneck = roof.bottleneck
        a.summary += f". ncu: {roof.evidence}"
        a.details["ncu"] = {"per_kernel": roof.per_kernel, "stalls": roof.stalls, "evidence": roof.evidence,
                            "lead_kernel_time_us": roof.metrics.get("kernel_time_us"),
                            "fp32_flops_per_s": roof.metrics.get("fp32_flops_per_s")}
    return a
