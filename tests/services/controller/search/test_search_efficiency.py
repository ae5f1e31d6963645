"""The policies actually search: on the synthetic landscape they beat the random baseline."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from kevolve.v1 import job_pb2

TOOL = Path(__file__).resolve().parents[4] / "tools" / "search_efficiency.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("search_efficiency", TOOL)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["search_efficiency"] = module
    spec.loader.exec_module(module)
    return module


def test_guided_policies_need_fewer_evaluations_than_random() -> None:
    bench = _bench()
    rand = bench.measure(job_pb2.RANDOM, {}, seeds=10, budget=60, parallelism=2)
    for policy, cfg in [(job_pb2.GREEDY, {}), (job_pb2.MCTS, {"uct_c": 0.3}), (job_pb2.EVOLUTIONARY, {})]:
        got = bench.measure(policy, cfg, seeds=10, budget=60, parallelism=2)
        assert got["mean"] < rand["mean"] and got["final"] > rand["final"], (policy, got, rand)


def test_benchmark_writes_an_honest_table(tmp_path: Path) -> None:
    md = _bench().table(seeds=2, budget=15, parallelisms=[1])
    assert "**synthetic**" in md and md.count("| random | 1 |") == 1
    assert len([line for line in md.splitlines() if line.startswith("| ") and "| 1 |" in line]) == 7
