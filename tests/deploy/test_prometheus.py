"""Prometheus config and alert rules: promtool checks them, its unit tests exercise every
alert, and a real Prometheus server (Debian's package) scrapes a real kevolve service
through the shipped relabelling and evaluates the shipped rules."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kevolve import subjects
from kevolve.bus import Bus
from kevolve.config import REPO_ROOT, CommonSettings
from kevolve.client.natsd import free_port

PROM_DIR = REPO_ROOT / "deploy" / "prometheus"
ALERTS = {"KevolveEvaluatorPoolDown", "KevolveNoEvaluators", "KevolveQueueLagGrowing",
          "KevolveEvaluationInfraErrorsHigh", "KevolveNoCandidatesEvaluated"}


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} not found: run .ci/install-system-deps (Debian package prometheus)")
    return found


def _promtool(*args: str, cwd: Path = PROM_DIR) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("promtool"), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_alert_rules_pass_promtool_check() -> None:
    out = _promtool("check", "rules", "kevolve-alerts.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    rules = yaml.safe_load((PROM_DIR / "kevolve-alerts.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    assert names == ALERTS
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert rule["labels"]["severity"] in {"warning", "critical"}
            assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_every_alert_has_a_firing_unit_test_and_they_pass() -> None:
    out = _promtool("test", "rules", "kevolve-alerts.test.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    tests = yaml.safe_load((PROM_DIR / "kevolve-alerts.test.yml").read_text())["tests"]
    fired = {case["alertname"] for t in tests for case in t.get("alert_rule_test", []) if case["exp_alerts"]}
    assert fired == ALERTS


def _kevolve_job() -> dict[str, Any]:
    config = yaml.safe_load((PROM_DIR / "prometheus.yml").read_text())
    return next(job for job in config["scrape_configs"] if job["job_name"] == "kevolve")


def test_scrape_config_passes_promtool_check(tmp_path: Path) -> None:
    """Debian's Prometheus is built without Kubernetes discovery, so promtool checks the
    config with each kubernetes_sd_configs block swapped for file discovery (everything
    else — relabelling, rule files — exactly as shipped); the Kubernetes block itself is
    checked against the manifests below."""
    config = yaml.safe_load((PROM_DIR / "prometheus.yml").read_text())
    for job in config["scrape_configs"]:
        for sd in job.pop("kubernetes_sd_configs", []):
            assert sd["role"] == "pod"
            assert sd["namespaces"]["names"] == ["kevolve"]  # the overlays' namespace
            job.setdefault("file_sd_configs", []).append({"files": [str(tmp_path / "targets.json")]})
    config["rule_files"] = [str(PROM_DIR / f) for f in config["rule_files"]]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    out = _promtool("check", "config", str(tmp_path / "prometheus.yml"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_scrape_config_keys_on_the_annotations_the_manifests_set() -> None:
    sources = {label for rule in _kevolve_job()["relabel_configs"] for label in rule.get("source_labels", [])}
    for annotation in ("prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path"):
        assert "__meta_kubernetes_pod_annotation_" + annotation.replace(".", "_").replace("/", "_") in sources
    manifests = "\n".join(p.read_text() for p in (REPO_ROOT / "deploy" / "k8s" / "base").glob("*.yaml"))
    assert manifests.count('prometheus.io/scrape: "true"') >= 5


# ---- a real Prometheus against a real service ------------------------------------------

def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _wait(what: str, check: Any, timeout_s: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def generator_metrics(service_env: dict[str, str], tmp_path: Path) -> Iterator[int]:
    """The real generator service (offline backend) serving /metrics on a loopback port."""
    port = free_port()
    env = {**service_env, "KEVOLVE_GENERATOR_METRICS_PORT": str(port), "KEVOLVE_METRICS_HOST": "127.0.0.1",
           "KEVOLVE_GENERATOR_BACKEND": "offline"}
    log = open(tmp_path / "generator.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "services.generator"], env=env, cwd=REPO_ROOT,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait("generator /metrics", lambda: process.poll() is None and
              b"kevolve_service_up" in urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read())
        yield port
    finally:
        _stop(process)
        log.close()
        if process.returncode not in (0, -15):
            print((tmp_path / "generator.log").read_text()[-3000:])


@pytest.fixture
def prometheus(generator_metrics: int, tmp_path: Path) -> Iterator[str]:
    """Prometheus with the shipped kevolve job and rules; discovery is a file that
    describes the generator as Kubernetes would (pod labels and annotations)."""
    pod = {
        "targets": ["127.0.0.1:1"],  # the pod IP; the port comes from the annotation
        "labels": {
            "__meta_kubernetes_namespace": "kevolve",
            "__meta_kubernetes_pod_name": "generator-7d9f-abcde",
            "__meta_kubernetes_pod_label_app_kubernetes_io_part_of": "kevolve",
            "__meta_kubernetes_pod_label_app_kubernetes_io_component": "generator",
            "__meta_kubernetes_pod_label_app_kubernetes_io_name": "generator",
            "__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
            "__meta_kubernetes_pod_annotation_prometheus_io_port": str(generator_metrics),
            "__meta_kubernetes_pod_annotation_prometheus_io_path": "/metrics",
        },
    }
    (tmp_path / "targets.json").write_text(json.dumps([pod]))
    job = _kevolve_job()
    del job["kubernetes_sd_configs"]
    job["file_sd_configs"] = [{"files": [str(tmp_path / "targets.json")], "refresh_interval": "1s"}]
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "rule_files": [str(PROM_DIR / "kevolve-alerts.yml")], "scrape_configs": [job]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(tmp_path / "prometheus.log", "wb")
    process = subprocess.Popen(
        [_tool("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait("prometheus ready", lambda: process.poll() is None and
              urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200)
        yield url
    finally:
        _stop(process)
        log.close()


def _query(url: str, promql: str) -> list[dict[str, Any]]:
    answer = _get(f"{url}/api/v1/query?query={urllib.parse.quote(promql)}")
    assert answer["status"] == "success"
    return list(answer["data"]["result"])


async def test_prometheus_scrapes_a_kevolve_service_and_evaluates_the_alerts(
        prometheus: str, generator_metrics: int, settings: CommonSettings) -> None:
    # Something an operator would watch: a malformed work message, terminated and counted.
    bus = await Bus.connect(settings, "test")
    await bus.js.publish(subjects.GENERATE, b"\xff\xff not a GenerateRequest")
    await bus.close()

    series = await asyncio.to_thread(
        _wait, "the malformed count in Prometheus",
        lambda: _query(prometheus, 'kevolve_bus_messages_total{outcome="malformed"} == 1'))
    (sample,) = series
    labels = sample["metric"]
    # The relabelling turned pod metadata into the labels the alerts and dashboard use.
    assert labels["subject"] == subjects.GENERATE
    assert (labels["job"], labels["component"], labels["pool"], labels["namespace"]) == \
        ("kevolve", "generator", "generator", "kevolve")
    # Scraped on the port from the prometheus.io/port annotation, not the discovered one.
    assert labels["instance"] == f"127.0.0.1:{generator_metrics}"

    up = _query(prometheus, 'kevolve_service_up{service="generator"}')
    assert [s["value"][1] for s in up] == ["1"]

    rules = _get(f"{prometheus}/api/v1/rules")["data"]["groups"]
    loaded = {r["name"]: r for g in rules for r in g["rules"]}
    assert set(loaded) == ALERTS
    assert all(r["health"] == "ok" for r in loaded.values()), [r.get("lastError") for r in loaded.values()]
    # No evaluator pod is discovered here, so that alert is on its way to firing.
    assert await asyncio.to_thread(
        _wait, "KevolveNoEvaluators pending",
        lambda: [a for a in _get(f"{prometheus}/api/v1/alerts")["data"]["alerts"]
                 if a["labels"]["alertname"] == "KevolveNoEvaluators" and a["state"] == "pending"])
