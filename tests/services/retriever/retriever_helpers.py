"""Builders for crafted artifacts: nodes with code, evaluation and profile reports in a store."""

from __future__ import annotations

import json
from typing import Any

from kevolve.config import REPO_ROOT
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2, work_pb2

SPEC = (REPO_ROOT / "examples" / "softmax.py").read_text()
KERNEL = (REPO_ROOT / "tests" / "fixtures" / "kernels" / "correct" / "softmax_rowwise.py").read_text()


def node(store: LocalStore, node_id: str, verdict: int, *, fitness: float = 0.0, code: str | None = KERNEL,
         report: dict[str, Any] | None = None, profile: dict[str, Any] | None = None,
         tunables: dict[str, str] | None = None, summary: str = "") -> common_pb2.NodeSummary:
    out = common_pb2.NodeSummary(node_id=node_id, verdict=verdict, fitness=fitness, tunables=tunables or {},
                                 summary=summary)
    if code is not None:
        out.code_key = store.put(code.encode(), "kernels", ".py")
    if report is not None:
        out.eval_report_key = store.put(json.dumps(report).encode(), "reports/eval", ".json")
    if profile is not None:
        out.profile_report_key = store.put(json.dumps(profile).encode(), "reports/profile", ".json")
    return out


def eval_report(verdict: str, *, reason: str = "", decided_by: str = "", traceback: str = "", log: str = "",
                mismatch: dict[str, Any] | None = None, cases: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    report: dict[str, Any] = {
        "result": {"verdict": verdict, "reason": reason, "decidedBy": decided_by, "cases": cases or []},
        "checks": [], "log": log, "traceback": traceback,
    }
    if mismatch is not None:
        report["mismatch"] = mismatch
    return report


def profile_report(bottleneck: str, metrics: dict[str, float], summary: str = "") -> dict[str, Any]:
    return {"result": {"bottleneck": bottleneck, "metrics": metrics, "summary": summary}, "details": {}}


def expand_request(store: LocalStore, parent: common_pb2.NodeSummary | None, *, platform: str = "cuda",
                   mode: int = common_pb2.PARENT_TRAJECTORY, spec: str = SPEC, **kwargs: Any) -> work_pb2.ExpandRequest:
    request = work_pb2.ExpandRequest(
        job_id="job-1", expansion_id="exp-1", platform=platform, spec_name="softmax",
        spec_key=store.put(spec.encode(), "specs", ".py"), context_mode=mode, generation=1, **kwargs,
    )
    if parent is not None:
        request.parent.CopyFrom(parent)
    return request
