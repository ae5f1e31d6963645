"""The lab tools' (tools/) host-side logic: the template sweep's point set and checks (under the
interpreter), and the GPU-time and contention tables read from a run's evaluation reports."""

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
    path = REPO_ROOT / "tools" / f"{name}.py"
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
    assert rows[0]["default"] and rows[0]["template"] == "conv1d_ncl"
    checked = sweep.check_spec(str(spec), rows[:2], "cpu")  # the spec's cpu sizes
    assert [r.get("correct") for r in checked] == [True, True], [r.get("error") for r in checked]


def test_sweep_renders_only_the_templates_asked_for(tmp_path: Path) -> None:
    sweep = _tool("sweep_templates")
    spec = REPO_ROOT / "bench" / "suite" / "bmm_fp16.py"
    every = {r["template"] for r in sweep.render_all(spec, 0, tmp_path)}
    assert {"matmul_epilogue", "matmul_tma"} <= every
    rows = sweep.render_all(spec, 0, tmp_path, ["matmul_tma"])
    assert rows and {r["template"] for r in rows} == {"matmul_tma"} and all("error" not in r for r in rows)


def _report(job: str, verdict: str, platform: str, kernel: float, compiled: float) -> dict[str, object]:
    return {"result": {"job_id": job, "verdict": verdict, "platform": platform, "cases": [{"name": "default"}]},
            "timing": {"0": {"candidate_ms": kernel, "compile_ms": compiled, "eager_ms": 1.0,
                             "extra": {"candidate_host_ms": 0.02, "compile_host_ms": 0.03}}}}


def _tgz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_gpu_time_table_takes_each_spec_best_passed_candidate_and_the_slower_baseline(tmp_path: Path) -> None:
    table = _tool("gpu_time_table")
    reports = {
        "a1": _report("job-a", "PASSED", "cuda", 0.05, 0.10),
        "a2": _report("job-a", "PASSED", "cuda", 0.04, 0.10),    # best of spec a: 2.5x in run
        "a3": _report("job-a", "INCORRECT", "cuda", 0.01, 0.10),  # fast but wrong: ignored
        "a4": _report("job-a", "PASSED", "cpu", 0.001, 0.10),     # a cpu screen: ignored
        "b1": _report("job-b", "PASSED", "cuda", 0.20, 0.10),     # slower than torch.compile
    }
    logs = _tgz(tmp_path / "logs.tgz", {f"objects/reports/eval/{n}.json": json.dumps(b).encode()
                                        for n, b in reports.items()})
    suite = {"specs": [{"job_id": "job-a", "spec": "spec_a"}, {"job_id": "job-b", "spec": "spec_b"}]}
    best = table.best_by_spec(suite, logs)
    assert best["spec_a"]["kernel_ms"] == pytest.approx(0.04)
    text = table.render(best, {"spec_a": 0.06})  # alone, torch.compile is faster: 1.5x counted
    assert "| `spec_a` | 0.0400 | 0.1000 | 2.50x | 0.0600 | 1.50x | 1.50x |" in text
    assert "| `spec_b` | 0.2000 | 0.1000 | 0.50x |" in text
    # geomean of 1.5 and 0.5 = 0.866; with spec_b falling back to PyTorch: sqrt(1.5) = 1.225
    assert "0.866x" in text and "1.225x" in text


def _phased(node: str, compiled: float, correctness: float, timing: float, recheck: float) -> dict[str, object]:
    return {"result": {"job_id": "job-a", "node_id": node, "verdict": "PASSED", "platform": "cuda"},
            "plan": {"cases": [{"name": "default"}]},
            "timing": {"0": {"candidate_ms": 0.05, "compile_ms": compiled}},
            "phases_s": {"candidate_correctness": correctness, "gpu_wait": 0.0, "candidate_timing": timing,
                         "candidate_recheck": recheck},
            "candidate_phases_s": {"correctness_trials": 1.0, "prepare_timing": 1.0}}


def test_contention_table_places_evaluations_on_one_clock(tmp_path: Path) -> None:
    tool = _tool("contention_table")
    # n1 ends at t=10: correctness 0-4 (GPU 2-4), timing 4-6, re-check 6-10.
    # n2 ends at t=12: correctness 0-5 (GPU 3-5), timing 5-9 (n1's re-check covers 6-9:
    # 3 of its 4 s), re-check 9-12. n1's timing window (4-6) overlaps n2's GPU tail 4-5.
    log = ("2026-11-23T18:00:10.000000Z [info     ] evaluated                      fitness=1.0 job=job-a "
           "node=n1 seconds=10.0 verdict=PASSED\n"
           "2026-11-23T18:00:12.000000Z [info     ] evaluated                      fitness=1.0 job=job-a "
           "node=n2 seconds=12.0 verdict=PASSED\n")
    logs = _tgz(tmp_path / "logs.tgz", {
        "objects/reports/eval/n1.json": json.dumps(_phased("n1", 0.10, 4.0, 2.0, 4.0)).encode(),
        "objects/reports/eval/n2.json": json.dumps(_phased("n2", 0.13, 5.0, 4.0, 3.0)).encode(),
        "logs/evaluator-cuda.log": log.encode()})
    suite = {"specs": [{"job_id": "job-a", "spec": "spec_a"}]}
    evs = {ev.node: ev for ev in tool.evaluations(suite, logs, {"spec_a/default": 0.10})}
    assert evs["n1"].timing[1] - evs["n1"].timing[0] == pytest.approx(2.0)
    assert tool.overlap(evs["n1"], list(evs.values())) == pytest.approx(0.5)   # 1 s of n2 in 2 s
    assert tool.overlap(evs["n2"], list(evs.values())) == pytest.approx(0.75)  # 3 s of n1 in 4 s
    assert evs["n2"].compile_ratio == {"default": pytest.approx(1.3)}
    text = tool.render(list(evs.values()))
    assert "| `spec_a` | 2 | 0.6 | 1.150 | 1.30 |" in text
    assert "| under one candidate | 2 | 1.150 | 1.30 | 50% |" in text


def _program(source: str, stem: str) -> str:
    from services.generator.lowering import program_source
    from services.generator.lowering.capture import capture

    cap = capture(source, [("default", {})], stem)
    assert cap.ok, cap.error
    return program_source(source, stem, cap, None)


_SPEC = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn({shape})]


def get_init_inputs():
    return []
'''


def test_launch_sweep_finds_the_gpu_launch_of_each_kind_and_rewrites_it_runnably() -> None:
    """The sweep rewrites GPU launches only: a column walk (looped), a whole-row sum and a
    pointwise kernel are found with their sizes, the interpreter's launch is left alone, and
    a rewritten program still compiles."""
    sweep = _tool("launch_sweep")
    looped = _program(_SPEC.format(body="x.amax(0)", shape="300, 80"), "amax_dim0")
    (launch, form), = list(sweep.sweepable_launches(looped))
    body = sweep._kernel_body(looped, launch.group("name"))
    assert form == "looped" and sweep.OUTPUTS.search(body).group(1) == "80"
    assert sweep.LOOP.search(body).group(1) == "300"
    rows = _program(_SPEC.format(body="x.sum(-1)", shape="64, 500"), "sum_rows")
    (launch, form), = list(sweep.sweepable_launches(rows))
    assert form == "whole_row" and launch.group("r") == "512"
    pointwise = _program(_SPEC.format(body="torch.sigmoid(x) * 2", shape="1000, 3000"), "pw")
    assert not list(sweep.sweepable_launches(pointwise))
    (launch,) = list(sweep.pointwise_launches(pointwise))
    assert launch.group("b") == "1024" and launch.group("w") == "4"
    rewritten = pointwise.replace(launch.group(0), f"{launch.group('name')}[((1,) if gpu else ({launch.group('c')},))]"
                                                   f"({launch.group('args')}BLOCK=512 if gpu else {launch.group('bc')}"
                                                   f"{launch.group('rest')}, num_warps=2")
    compile(rewritten, "rewritten", "exec")
    assert list(sweep.splits(80, 300, [1024])) == [(128, 8), (64, 16), (32, 32), (16, 64), (8, 128), (4, 256), (2, 512)]
