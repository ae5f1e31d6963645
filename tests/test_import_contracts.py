"""The architecture's import boundaries (docs/architecture.md), held on every run of the suite.

The package contracts live in pyproject.toml ([tool.importlinter]) and are checked with
import-linter; ``bench/`` is a folder of scripts and specs, not a package, so its rule (it
drives the system through the client and the core, never through a service's internals)
is checked here on the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kevolve.config import REPO_ROOT


def test_package_contracts_are_kept() -> None:
    pytest.importorskip("importlinter", reason="import-linter is in the test extra (pip install -e '.[test]')")
    from importlinter.cli import lint_imports

    status = lint_imports(config_filename=str(REPO_ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert status == 0, "an import contract of pyproject.toml is broken (the chains are printed above)"


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_bench_uses_no_service_internals() -> None:
    offenders = {}
    for path in (REPO_ROOT / "bench").rglob("*.py"):
        internal = sorted(m for m in _imported(path) if m == "services" or m.startswith("services."))
        if internal:
            offenders[str(path.relative_to(REPO_ROOT))] = internal
    assert not offenders, f"bench/ reaches into services (move lab scripts to tools/): {offenders}"
