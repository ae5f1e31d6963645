"""proto/ is the single source of truth: the committed generated code must match it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kevolve.config import REPO_ROOT


def test_generated_code_is_up_to_date(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(REPO_ROOT / "proto")) for p in (REPO_ROOT / "proto").rglob("*.proto"))
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", str(REPO_ROOT / "proto"),
                    f"--python_out={tmp_path}", f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", *protos],
                   check=True)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py*"))
    assert generated, "protoc generated nothing"
    stale = [str(rel) for rel in generated if (REPO_ROOT / rel).read_text() != (tmp_path / rel).read_text()]
    missing = [str(rel) for rel in generated if not (REPO_ROOT / rel).exists()]
    assert not missing and not stale, f"run `make proto`: stale {stale}, missing {missing}"


def test_services_never_import_each_other() -> None:
    """Services talk only through messages: no `services.<other>` import anywhere in a service."""
    import ast

    offenders = []
    for service_dir in sorted((REPO_ROOT / "services").iterdir()):
        if not service_dir.is_dir() or service_dir.name.startswith("__"):
            continue
        for path in service_dir.rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                for name in names:
                    parts = name.split(".")
                    if parts[0] == "services" and len(parts) > 1 and parts[1] != service_dir.name:
                        offenders.append(f"{path.relative_to(REPO_ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)
