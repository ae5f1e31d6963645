"""Nsight Compute: the command line, its CSV (``--csv --page raw``), and a roofline reading.

ncu prints one header row (launch attributes, then one column per metric), one row of
units, then one row per profiled kernel launch. Numbers may carry thousands separators and
units vary with magnitude ("Kbyte", "usecond"), so :func:`parse_csv` normalises every
metric to base units (bytes, bytes/s, ns, %) before anything reads it.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

TIME = "gpu__time_duration.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_BPS = "dram__bytes.sum.per_second"
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
TENSOR_PCT = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCC = "sm__maximum_warps_per_active_cycle_pct"
REGISTERS = "launch__registers_per_thread"
SMEM_STATIC = "launch__shared_mem_per_block_static"
SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
LIMIT_REGS = "launch__occupancy_limit_registers"
LIMIT_SMEM = "launch__occupancy_limit_shared_mem"
LIMIT_WARPS = "launch__occupancy_limit_warps"
LIMIT_BLOCKS = "launch__occupancy_limit_blocks"
L1_HIT = "l1tex__t_sector_hit_rate.pct"
L2_HIT = "lts__t_sector_hit_rate.pct"
SPILL_LD = "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"
SPILL_ST = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "lg_throttle",
                 "wait", "barrier", "not_selected", "no_instruction", "membar", "dispatch_stall", "drain",
                 "imc_miss", "tex_throttle", "branch_resolving", "sleeping", "misc")
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"

METRICS: tuple[str, ...] = (
    TIME, DRAM_READ, DRAM_WRITE, DRAM_PCT, DRAM_BPS, SM_PCT, TENSOR_PCT, OCCUPANCY, THEORETICAL_OCC,
    REGISTERS,
    SMEM_STATIC, SMEM_DYNAMIC, LIMIT_REGS, LIMIT_SMEM, LIMIT_WARPS, LIMIT_BLOCKS, L1_HIT, L2_HIT, SPILL_LD,
    SPILL_ST, FFMA, FADD, FMUL, *(f"{STALL_PREFIX}{r}{STALL_SUFFIX}" for r in STALL_REASONS),
)
# Launch attributes ncu puts before the metric columns in the raw page.
ATTRIBUTES = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC")

# A kernel shorter than this is dominated by launch latency (a few us on current GPUs).
LAUNCH_BOUND_US = 5.0
BOUND_FRAC = 0.6        # a unit at >= 60% of its peak is the one limiting the kernel
LOW_OCCUPANCY = 0.25

_UNIT_SCALE = {
    "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "byte/s": 1.0, "byte/second": 1.0, "kbyte/second": 1e3, "mbyte/second": 1e6, "gbyte/second": 1e9,
    "tbyte/second": 1e12,
    "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9,
}


class NcuParseError(ValueError):
    """The text is not ncu's raw CSV (the message says what was expected)."""


@dataclass
class NcuKernel:
    """One profiled launch: attributes as text, metrics in base units."""

    name: str
    block: str
    grid: str
    metrics: dict[str, float] = field(default_factory=dict)


def command(ncu: str, kernel_names: list[str], max_launches: int, log_file: str,
            target: list[str]) -> list[str]:
    """ncu argv profiling only the named kernels (the candidate's own, not library kernels)."""
    regex = "|".join(re.escape(n) for n in kernel_names) if kernel_names else ".*"
    return [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
            "--target-processes", "all", "--metrics", ",".join(METRICS), "-k", f"regex:^({regex})$",
            "-c", str(max_launches), "--log-file", log_file, *target]


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if text in {"", "n/a", "N/A", "-"}:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def parse_csv(text: str) -> list[NcuKernel]:
    """Parse ``ncu --csv --page raw`` output (log lines such as ``==PROF==`` are skipped)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        raise NcuParseError("no CSV rows in ncu output (expected a quoted header row starting with \"ID\")")
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    if "Kernel Name" not in header:
        raise NcuParseError(f"ncu CSV header lacks 'Kernel Name' (got {header[:6]})")
    # The units row has an empty ID cell; launch rows carry the launch ID there.
    has_units = len(rows) > 1 and rows[1] and rows[1][0].strip() == ""
    units = rows[1] if has_units else [""] * len(header)
    body = rows[2:] if has_units else rows[1:]
    col = {name: i for i, name in enumerate(header)}
    kernels = []
    for row in body:
        if len(row) != len(header):
            raise NcuParseError(f"ncu CSV row has {len(row)} fields, header has {len(header)}")
        kernel = NcuKernel(name=row[col["Kernel Name"]],
                           block=row[col["Block Size"]] if "Block Size" in col else "",
                           grid=row[col["Grid Size"]] if "Grid Size" in col else "")
        for name, i in col.items():
            if name in ATTRIBUTES:
                continue
            value = _number(row[i])
            if value is None:
                continue
            kernel.metrics[name] = value * _UNIT_SCALE.get(units[i].strip().lower(), 1.0)
        kernels.append(kernel)
    return kernels


def unavailable_reason(log: str) -> str | None:
    """Why ncu could not profile, from its own messages; None if it did not say."""
    if "ERR_NVGPUCTRPERM" in log:
        return "ncu: no permission to read GPU performance counters (ERR_NVGPUCTRPERM)"
    if "LibraryNotLoaded" in log or "Failed to initialize the profiler" in log:
        return "ncu: the profiler could not initialise on this machine (" + \
            ("LibraryNotLoaded" if "LibraryNotLoaded" in log else "initialisation failed") + ")"
    if "No kernels were profiled" in log:
        return "ncu: no kernel matched the candidate's kernel names"
    match = re.search(r"==ERROR==\s*(.+)", log)
    if match:
        return f"ncu: {match.group(1).strip()[:300]}"
    return None


def _median(kernels: list[NcuKernel], metric: str) -> float | None:
    values = [k.metrics[metric] for k in kernels if metric in k.metrics]
    return statistics.median(values) if values else None


@dataclass
class Roofline:
    bottleneck: str
    evidence: str
    metrics: dict[str, float]
    per_kernel: list[dict[str, Any]]
    stalls: list[tuple[str, float]]


def classify(kernels: list[NcuKernel]) -> Roofline:
    """Roofline reading of the profiled launches, led by the kernel that took the most time."""
    if not kernels:
        raise NcuParseError("ncu profiled no kernel launch")
    by_name: dict[str, list[NcuKernel]] = {}
    for k in kernels:
        by_name.setdefault(k.name, []).append(k)
    per_kernel = []
    for name, launches in by_name.items():
        entry: dict[str, Any] = {"name": name, "launches": len(launches), "grid": launches[0].grid,
                                 "block": launches[0].block}
        for metric in METRICS:
            value = _median(launches, metric)
            if value is not None:
                entry[metric] = value
        per_kernel.append(entry)
    per_kernel.sort(key=lambda e: -(e.get(TIME, 0.0) * e["launches"]))
    lead = per_kernel[0]
    m: dict[str, float] = {}

    def put(key: str, metric: str, scale: float = 1.0) -> None:
        if metric in lead:
            m[key] = lead[metric] * scale

    put("kernel_time_us", TIME, 1e-3)
    put("dram_bw_frac", DRAM_PCT, 0.01)
    put("dram_bytes_per_s", DRAM_BPS)
    put("sm_util_frac", SM_PCT, 0.01)
    put("tensor_util_frac", TENSOR_PCT, 0.01)
    put("achieved_occupancy", OCCUPANCY, 0.01)
    put("registers_per_thread", REGISTERS)
    put("l1_hit_rate", L1_HIT, 0.01)
    put("l2_hit_rate", L2_HIT, 0.01)
    put("bytes_read", DRAM_READ)
    put("bytes_written", DRAM_WRITE)
    if SMEM_STATIC in lead or SMEM_DYNAMIC in lead:
        m["shared_mem_per_block"] = lead.get(SMEM_STATIC, 0.0) + lead.get(SMEM_DYNAMIC, 0.0)
    if SPILL_LD in lead or SPILL_ST in lead:
        m["spill_bytes"] = lead.get(SPILL_LD, 0.0) + lead.get(SPILL_ST, 0.0)
    stalls = sorted(((r, lead[f"{STALL_PREFIX}{r}{STALL_SUFFIX}"]) for r in STALL_REASONS
                     if f"{STALL_PREFIX}{r}{STALL_SUFFIX}" in lead), key=lambda s: -s[1])[:3]
    top = ", ".join(f"{r} {v:.1f}" for r, v in stalls)
    stall_text = f"; top warp stalls (cycles per issued instruction): {top}" if stalls else ""
    name = lead["name"]
    t = m.get("kernel_time_us")
    dram, sm = m.get("dram_bw_frac", 0.0), m.get("sm_util_frac", 0.0)
    tensor, occ = m.get("tensor_util_frac", 0.0), m.get("achieved_occupancy")
    bps = m.get("dram_bytes_per_s")
    bw_text = f" ({bps / 1e9:.0f} GB/s)" if bps else ""
    if t is not None and t < LAUNCH_BOUND_US:
        bottleneck = "launch_bound"
        evidence = (f"{name} runs {t:.2f} us per launch, under the ~{LAUNCH_BOUND_US:.0f} us a launch costs: "
                    f"fuse launches or do more work per launch")
    elif dram >= BOUND_FRAC and dram >= sm:
        bottleneck = "memory_bound"
        evidence = f"{name} is memory-bound at {dram:.0%} of peak DRAM bandwidth{bw_text}, SM at {sm:.0%}"
    elif max(sm, tensor) >= BOUND_FRAC:
        bottleneck = "compute_bound"
        unit = "tensor pipe" if tensor > sm else "SM"
        evidence = f"{name} is compute-bound: {unit} at {max(sm, tensor):.0%} of peak, DRAM at {dram:.0%}"
    elif occ is not None and occ < LOW_OCCUPANCY and _occupancy_limiter(lead) in {"registers", "shared_mem"}:
        limiter = _occupancy_limiter(lead)
        bottleneck = "occupancy_registers" if limiter == "registers" else "occupancy_smem"
        detail = (f"{lead.get(REGISTERS, 0):.0f} registers per thread" if limiter == "registers"
                  else f"{m.get('shared_mem_per_block', 0):.0f} B shared memory per block")
        evidence = (f"{name} reaches {occ:.0%} achieved occupancy, limited by {detail}; "
                    f"DRAM at {dram:.0%}, SM at {sm:.0%}")
    else:
        bottleneck = "latency_bound"
        evidence = (f"{name}: neither DRAM ({dram:.0%} of peak{bw_text}) nor SM ({sm:.0%}) is near its peak"
                    + (f", achieved occupancy {occ:.0%}" if occ is not None else ""))
    flops = sum(lead.get(x, 0.0) * w for x, w in ((FFMA, 2.0), (FADD, 1.0), (FMUL, 1.0)))
    if flops and t:
        m["fp32_flops_per_s"] = flops / (t * 1e-6)
    return Roofline(bottleneck, evidence + stall_text, m, per_kernel, stalls)


def _occupancy_limiter(lead: dict[str, Any]) -> str:
    """The launch resource allowing the fewest blocks per SM (ncu's occupancy limits)."""
    limits = {k: lead[v] for k, v in (("registers", LIMIT_REGS), ("shared_mem", LIMIT_SMEM),
                                      ("warps", LIMIT_WARPS), ("blocks", LIMIT_BLOCKS)) if v in lead}
    return min(limits, key=lambda k: limits[k]) if limits else ""
