"""ncu CSV parsing and the roofline reading, on a real recorded ncu CSV (see data/README.md)
and on rows derived from it by editing metric cells (those derived rows are crafted)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from services.profiler import analysis, ncu

RECORDED = (Path(__file__).parent / "data" / "ncu_h200_probe_scale_kernel.csv").read_text()
ARCH_METRICS = {"kernel_time_us", "launches", "kernel_count", "bytes_read", "bytes_written", "dram_bytes_per_s",
                "dram_bw_frac", "sm_util_frac", "tensor_util_frac", "achieved_occupancy", "registers_per_thread",
                "spill_bytes", "shared_mem_per_block", "l1_hit_rate", "l2_hit_rate"}


def crafted(**cells: str) -> str:
    """The recorded CSV with metric cells replaced on every launch row (a crafted variant)."""
    lines = [ln for ln in RECORDED.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    for row in rows[2:]:
        for metric, value in cells.items():
            row[header.index(metric)] = value
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_recorded_csv_parses_to_base_units() -> None:
    kernels = ncu.parse_csv(RECORDED)
    assert [k.name for k in kernels] == ["probe_scale_kernel"] * 3
    first = kernels[0]
    assert first.grid == "(16384, 1, 1)" and first.block == "(128, 1, 1)"
    assert first.metrics[ncu.TIME] == 30720.0                   # "30,720" ns: separators removed
    assert first.metrics[ncu.DRAM_READ] == 67_116_288.0         # 2^24 fp32 values read (+ a little)
    assert first.metrics[ncu.DRAM_PCT] == pytest.approx(74.63)
    assert first.metrics[ncu.REGISTERS] == 16.0
    assert "Device" not in first.metrics and "device__attribute_chip" in first.metrics


def test_recorded_kernel_is_memory_bound_with_evidence() -> None:
    roof = ncu.classify(ncu.parse_csv(RECORDED))
    assert roof.bottleneck == "memory_bound"
    assert "memory-bound at 74% of peak DRAM bandwidth (3575 GB/s)" in roof.evidence
    assert roof.stalls[0][0] == "long_scoreboard"  # waiting on global memory, as a memory-bound kernel does
    assert roof.metrics["dram_bw_frac"] == pytest.approx(0.7437)
    assert roof.metrics["achieved_occupancy"] == pytest.approx(0.828)
    assert set(roof.metrics) - {"fp32_flops_per_s"} <= ARCH_METRICS


def test_low_occupancy_limited_by_registers() -> None:
    text = crafted(**{ncu.DRAM_PCT: "12.5", ncu.SM_PCT: "20", ncu.OCCUPANCY: "12.1", ncu.REGISTERS: "255",
                      ncu.LIMIT_REGS: "1", ncu.TIME: "250,000"})
    roof = ncu.classify(ncu.parse_csv(text))
    assert roof.bottleneck == "occupancy_registers"
    assert "12% achieved occupancy" in roof.evidence and "255 registers per thread" in roof.evidence


def test_low_occupancy_limited_by_shared_memory() -> None:
    text = crafted(**{ncu.DRAM_PCT: "10", ncu.SM_PCT: "10", ncu.OCCUPANCY: "10", ncu.LIMIT_SMEM: "1",
                      ncu.SMEM_DYNAMIC: "196608", ncu.TIME: "90000"})
    roof = ncu.classify(ncu.parse_csv(text))
    assert roof.bottleneck == "occupancy_smem" and "196608 B shared memory per block" in roof.evidence


def test_short_kernels_are_launch_bound_and_busy_sms_compute_bound() -> None:
    assert ncu.classify(ncu.parse_csv(crafted(**{ncu.TIME: "2,100"}))).bottleneck == "launch_bound"
    roof = ncu.classify(ncu.parse_csv(crafted(**{ncu.DRAM_PCT: "20", ncu.SM_PCT: "88.5"})))
    assert roof.bottleneck == "compute_bound" and "SM at 88% of peak" in roof.evidence
    roof = ncu.classify(ncu.parse_csv(crafted(**{ncu.DRAM_PCT: "30", ncu.SM_PCT: "35", ncu.OCCUPANCY: "60"})))
    assert roof.bottleneck == "latency_bound"


def test_unreadable_output_and_counter_permission_are_explained() -> None:
    with pytest.raises(ncu.NcuParseError, match="no CSV rows"):
        ncu.parse_csv("==PROF== Connected to process 1\n")
    with pytest.raises(ncu.NcuParseError, match="fields"):
        ncu.parse_csv(RECORDED.replace('"probe_scale_kernel",', "", 1).replace('"30,720"', '"1"'))
    log = ("==PROF== Connected to process 7 (/usr/bin/python3)\n==ERROR== ERR_NVGPUCTRPERM - The user does not "
           "have permission to access NVIDIA GPU Performance Counters on the target device 0.\n")
    assert "ERR_NVGPUCTRPERM" in (ncu.unavailable_reason(log) or "")
    assert ncu.unavailable_reason("==ERROR== Failed to initialize the profiler: LibraryNotLoaded") is not None
    assert ncu.unavailable_reason("all fine") is None


def test_command_profiles_only_the_candidates_kernels() -> None:
    argv = ncu.command("/usr/bin/ncu", ["softmax_kernel", "k2"], 20, "/tmp/x.csv", ["python", "child.py"])
    assert argv[argv.index("-k") + 1] == "regex:^(softmax_kernel|k2)$"
    assert argv[argv.index("--metrics") + 1].split(",") == list(ncu.METRICS)
    assert argv[-2:] == ["python", "child.py"] and "--clock-control" in argv


def test_cuda_analysis_combines_torch_profiler_and_ncu() -> None:
    observed = {"kernels": [{"name": "probe_scale_kernel", "launches": 1.0, "device_time_us_total": 31.0,
                             "device_time_us_per_launch": 31.0}]}
    a = analysis.cuda(observed, ncu.parse_csv(RECORDED), None)
    assert a.tools == ["torch.profiler", "ncu"] and a.bottleneck == "memory_bound"
    assert a.metrics["kernel_time_us"] == 31.0 and a.metrics["dram_bw_frac"] == pytest.approx(0.7437)
    assert set(a.metrics) <= ARCH_METRICS
    degraded = analysis.cuda(observed, None, "ncu: no permission to read GPU performance counters (ERR_NVGPUCTRPERM)")
    assert degraded.tools == ["torch.profiler"] and "ERR_NVGPUCTRPERM" in degraded.unavailable[0]
    assert degraded.bottleneck == "unknown" and "dram_bw_frac" not in degraded.metrics
