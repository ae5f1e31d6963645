"""Rendered Kubernetes manifests, shared by the deploy tests (rendered once per session)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kevolve.config import REPO_ROOT

K8S = REPO_ROOT / "deploy" / "k8s"
OVERLAYS = ("dev", "prod")  # every overlay under deploy/k8s


def render(overlay: Path) -> list[dict[str, Any]]:
    """``kubectl kustomize`` (kustomize built into kubectl, which the machine image carries)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl not found: it renders the kustomize overlays (deploy/README.md)")
    out = subprocess.run([kubectl, "kustomize", str(overlay)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"kubectl kustomize {overlay} failed:\n{out.stderr}"
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


@pytest.fixture(scope="session")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {name: render(K8S / name) for name in OVERLAYS}


@pytest.fixture(scope="session")
def render_overlay() -> Callable[[str], list[dict[str, Any]]]:
    """Renders any folder under deploy/k8s by name (a fixture: test modules never import
    conftest, whose module name other test folders share)."""
    return lambda name: render(K8S / name)
