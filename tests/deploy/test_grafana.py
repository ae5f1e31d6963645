"""The Grafana dashboard: generated from code and up to date, and every query reads
metrics (and labels) that the services really export."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kevolve.config import REPO_ROOT

GRAFANA = REPO_ROOT / "deploy" / "grafana"
DASHBOARD = GRAFANA / "kevolve-fleet.json"
ALERTS = REPO_ROOT / "deploy" / "prometheus" / "kevolve-alerts.yml"
# Labels Prometheus adds to every scraped series (deploy/prometheus/prometheus.yml relabelling).
TARGET_LABELS = {"job", "instance", "component", "pool", "namespace", "pod"}
METRIC_CLASSES = {"Counter", "Gauge", "Histogram", "Summary"}
# Series other exporters publish, which panels may read: NVIDIA's dcgm-exporter (its own labels).
EXTERNAL = {name: {"gpu", "Hostname", "UUID", "modelName", "device"} for name in
            ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL")}


def _defined_metrics() -> dict[str, set[str]]:
    """Every series name the code exports -> its label names, found by parsing (not
    importing) kevolve/ and services/, so the check follows the code as it changes."""
    exported: dict[str, set[str]] = {}
    for path in [*(REPO_ROOT / "kevolve").rglob("*.py"), *(REPO_ROOT / "services").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            kind = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0]
            if kind not in METRIC_CLASSES or not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            name = first.value
            labels_node = node.args[2] if len(node.args) > 2 else next(
                (k.value for k in node.keywords if k.arg == "labelnames"), None)
            labels = set()
            if isinstance(labels_node, (ast.List, ast.Tuple)):
                labels = {e.value for e in labels_node.elts if isinstance(e, ast.Constant)}
            if kind == "Counter":
                exported[name if name.endswith("_total") else f"{name}_total"] = labels
            elif kind == "Gauge":
                exported[name] = labels
            else:  # Histogram / Summary
                exported.update({f"{name}_sum": labels, f"{name}_count": labels})
                if kind == "Histogram":
                    exported[f"{name}_bucket"] = labels | {"le"}
    return exported


def _dashboard_queries() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    out = [(p["title"], t["expr"]) for p in board["panels"] for t in p.get("targets", [])]
    out += [(f"variable {v['name']}", v["query"]) for v in board["templating"]["list"] if v["type"] == "query"]
    return out


def _alert_queries() -> list[tuple[str, str]]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [(r["alert"], r["expr"]) for g in rules["groups"] for r in g["rules"]]


_METRIC = re.compile(r"\b(kevolve_[a-z0-9_]+)\b")
_SELECTOR = re.compile(r"\b(kevolve_[a-z0-9_]+|up)\{([^}]*)\}")
_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
_GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def test_the_dashboard_json_is_what_the_builder_writes() -> None:
    out = subprocess.run([sys.executable, str(GRAFANA / "build_dashboard.py"), "--check"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_the_metric_scan_finds_the_known_definitions() -> None:
    exported = _defined_metrics()
    # Spot checks from kevolve/bus.py and kevolve/runtime.py, so a broken scan cannot pass silently.
    assert exported["kevolve_bus_messages_total"] == {"subject", "outcome"}
    assert exported["kevolve_bus_handle_seconds_bucket"] == {"subject", "le"}
    assert exported["kevolve_bus_consumer_pending"] == {"subject"}
    assert "kevolve_service_up" in exported


@pytest.mark.parametrize("source", ["dashboard", "alerts"])
def test_every_query_reads_exported_metrics_and_labels(source: str) -> None:
    exported = _defined_metrics()
    queries = _dashboard_queries() if source == "dashboard" else _alert_queries()
    assert queries
    problems: list[str] = []
    for title, expr in queries:
        metrics = set(_METRIC.findall(expr))
        problems += [f"{title}: {m} is not exported by any service" for m in metrics - set(exported)]
        known = set().union(*(exported.get(m, set()) for m in metrics)) | TARGET_LABELS
        known |= set().union(*(labels for name, labels in EXTERNAL.items() if name in expr))
        for metric, matchers in _SELECTOR.findall(expr):
            allowed = TARGET_LABELS if metric == "up" else exported.get(metric, set()) | TARGET_LABELS
            problems += [f"{title}: {metric} has no label {label}" for label in _MATCHER.findall(matchers)
                         if label not in allowed and label != "__name__"]
        for grouping in _GROUPING.findall(expr):
            labels = {label.strip() for label in grouping.split(",") if label.strip()}
            problems += [f"{title}: grouping by unknown label {label}" for label in labels - known]
    assert not problems, "\n".join(problems)


def test_every_contract_metric_is_on_the_dashboard_or_alerted_on() -> None:
    """docs/architecture.md lists the metrics every service must export; each one should
    be visible to an operator somewhere."""
    doc = (REPO_ROOT / "docs" / "architecture.md").read_text()
    section = doc.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    names = re.findall(r"`([a-z_]+)(?:\{[^}]*\})?`", section)
    contract = {f"kevolve_{name}" for name in names if not name.startswith("kevolve") and not name.endswith("_")}
    assert len(contract) >= 15
    used = " ".join(expr for _, expr in _dashboard_queries() + _alert_queries())
    missing = {m for m in contract if not re.search(rf"\b{m}(_bucket|_total)?\b", used)}
    assert not missing, sorted(missing)


def test_every_query_is_valid_promql(tmp_path: Path) -> None:
    """promtool parses each query (Grafana's $__ macros and variables substituted) as a
    recording rule."""
    rules: list[dict[str, Any]] = []
    for i, (_, expr) in enumerate(_dashboard_queries()):
        if expr.startswith("label_values("):
            continue  # a Grafana function, not PromQL
        promql = (expr.replace("$__rate_interval", "5m").replace("$__range", "6h")
                  .replace("$platform", ".*"))
        rules.append({"record": f"kevolve:dashboard_query_{i}", "expr": promql})
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool not found: run .ci/install-system-deps (Debian package prometheus)")
    out = subprocess.run([promtool, "check", "rules", str(tmp_path / "queries.yml")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(rules)} rules found" in out.stdout
