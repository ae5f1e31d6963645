"""The GPU bench tools' host-side logic: the template sweep's point set and checks (under the
interpreter), and the GPU-time table read from a run's evaluation reports."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from kevolve.config import REPO_ROOT


def _tool(name: str) -> ModuleType:
    path = REPO_ROOT / "bench" / "gpu" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_gpu_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_sweep_points_are_defaults_then_one_knob_moves_then_distinct_random() -> None:
    sweep = _tool("sweep_templates")
    tunables = {"BLOCK": ["1024", "512", "2048"], "num_warps": ["4", "8"]}
    points = sweep.points(tunables, extra=10, seed=3)
    assert points[0] == {"BLOCK": "1024", "num_warps": "4"}
    assert points[1:4] == [{"BLOCK": "512", "num_warps": "4"}, {"BLOCK": "2048", "num_warps": "4"},
                           {"BLOCK": "1024", "num_warps": "8"}]
    # the space has 6 points: asking for 10 random ones yields the 2 not yet listed, no repeats
    assert len(points) == 6 and len({tuple(p.values()) for p in points}) == 6


def test_sweep_renders_and_checks_suite_points_under_the_interpreter(tmp_path: Path) -> None:
    sweep = _tool("sweep_templates")
    spec = REPO_ROOT / "bench" / "suite" / "conv1d_k3_fp16.py"
    rows = sweep.render_all(spec, 0, tmp_path)
    assert rows and all("error" not in r for r in rows)
    assert rows[0]["default"] and rows[0]["template"] == "conv1d_igemm"
    checked = sweep.check_spec(str(spec), rows[:2], "cpu")  # the spec's cpu sizes
    assert [r.get("correct") for r in checked] == [True, True], [r.get("error") for r in checked]


def _report(job: str, verdict: str, platform: str, kernel: float, compiled: float) -> dict[str, object]:
    return {"result": {"job_id": job, "verdict": verdict, "platform": platform, "cases": [{"name": "default"}]},
            "timing": {"0": {"candidate_ms": kernel, "compile_ms": compiled, "eager_ms": 1.0,
                             "extra": {"candidate_host_ms": 0.02, "compile_host_ms": 0.03}}}}


def test_gpu_time_table_takes_each_spec_best_passed_candidate_and_the_slower_baseline(tmp_path: Path) -> None:
    table = _tool("gpu_time_table")
    reports = {
        "a1": _report("job-a", "PASSED", "cuda", 0.05, 0.10),
        "a2": _report("job-a", "PASSED", "cuda", 0.04, 0.10),    # best of spec a: 2.5x in run
        "a3": _report("job-a", "INCORRECT", "cuda", 0.01, 0.10),  # fast but wrong: ignored
        "a4": _report("job-a", "PASSED", "cpu", 0.001, 0.10),     # a cpu screen: ignored
        "b1": _report("job-b", "PASSED", "cuda", 0.20, 0.10),     # slower than torch.compile
    }
    logs = tmp_path / "logs.tgz"
    with tarfile.open(logs, "w:gz") as tar:
        for name, body in reports.items():
            data = json.dumps(body).encode()
            info = tarfile.TarInfo(f"objects/reports/eval/{name}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    suite = {"specs": [{"job_id": "job-a", "spec": "spec_a"}, {"job_id": "job-b", "spec": "spec_b"}]}
    best = table.best_by_spec(suite, logs)
    assert best["spec_a"]["kernel_ms"] == pytest.approx(0.04)
    text = table.render(best, {"spec_a": 0.06})  # alone, torch.compile is faster: 1.5x counted
    assert "| `spec_a` | 0.0400 | 0.1000 | 2.50x | 0.0600 | 1.50x | 1.50x |" in text
    assert "| `spec_b` | 0.2000 | 0.1000 | 0.50x |" in text
    # geomean of 1.5 and 0.5 = 0.866; with spec_b falling back to PyTorch: sqrt(1.5) = 1.225
    assert "0.866x" in text and "1.225x" in text
