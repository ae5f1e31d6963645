"""Validating a submitted spec: statically, then by importing it in a sandboxed child.

A spec is user code, so it is only ever executed in a child process with a scrubbed
environment, resource limits and a deadline (``kevolve.exec.sandbox``); the controller itself
only parses it. The error a user gets is the Python error their spec raised.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from kevolve.exec import sandbox
from kevolve.specfile import SpecError, SpecOutline, check_outline

from .probe_messages import ProbeReport


@dataclass(frozen=True)
class ProbeResult:
    outline: SpecOutline
    inputs: int
    screening_sizes: dict[str, int]  # derived when neither the spec nor the request gave any


# Specs that already passed, by exact source and sizes: resubmitting the same spec (the
# common case: several jobs, policies or platforms per spec) skips the ~seconds of a probe.
_PASSED: OrderedDict[str, ProbeResult] = OrderedDict()
_PASSED_MAX = 256


def unknown_cpu_sizes(outline: SpecOutline, cpu_sizes: dict[str, int]) -> None:
    """SpecError when the screening sizes (the request's, else the spec's cpu_shapes) name no
    module-level integer constant of the spec."""
    unknown = sorted(set(cpu_sizes or outline.cpu_sizes) - set(outline.sizes))
    if unknown:
        raise SpecError(f"cpu size override names no module-level integer constant: {', '.join(unknown)}")


def probe(source: str, cpu_sizes: dict[str, int], timeout_s: float,
          outline: SpecOutline | None = None) -> ProbeResult:
    """Raise SpecError naming what is wrong; return the outline when the spec imports and runs.

    ``outline``: the spec already parsed and its sizes checked (the API does both once per
    submission); without it, the probe does them itself."""
    if outline is None:
        outline = check_outline(source)
        unknown_cpu_sizes(outline, cpu_sizes)
    sizes = dict(cpu_sizes or outline.cpu_sizes)
    key = hashlib.sha256(json.dumps([source, sorted(sizes.items())]).encode()).hexdigest()
    if key in _PASSED:
        _PASSED.move_to_end(key)
        return _PASSED[key]
    inputs, derived = _run_probe(source, sizes, timeout_s)
    result = ProbeResult(outline=outline, inputs=inputs, screening_sizes=derived)
    _PASSED[key] = result
    while len(_PASSED) > _PASSED_MAX:
        _PASSED.popitem(last=False)
    return result


def _run_probe(source: str, sizes: dict[str, int], timeout_s: float) -> tuple[int, dict[str, int]]:
    """The number of inputs the spec's get_inputs() returned and the screening sizes derived
    (none given), or SpecError saying what failed."""
    with tempfile.TemporaryDirectory(prefix="kv-spec-") as tmp:
        spec_file = Path(tmp) / "spec.py"
        spec_file.write_text(source, encoding="utf-8")
        # A plain spawn (no preexec_fn) of a helper without gRPC; the helper applies the sandbox.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": sandbox.child_pythonpath(),
               "HOME": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run([sys.executable, "-m", "services.controller.api.spec_sandbox", str(spec_file),
                                   json.dumps(sizes), str(timeout_s)], capture_output=True, text=True,
                                  env=env, cwd=tmp, timeout=timeout_s + 30)
        except subprocess.TimeoutExpired as exc:
            raise SpecError(f"spec probe did not finish within {timeout_s:.0f}s") from exc
    report = _last_report(done.stdout)
    if report is None:
        raise RuntimeError(f"spec sandbox helper failed (exit {done.returncode}): {done.stderr[-2000:]}")
    if report.unavailable:
        raise RuntimeError(report.unavailable)
    if report.killed_for == "timeout":
        raise SpecError(f"the spec's import, Model(*get_init_inputs()) or get_inputs() did not finish within "
                        f"{timeout_s:.0f}s")
    if report.killed_for:
        raise SpecError(f"the spec's import, Model(*get_init_inputs()) or get_inputs() passed the sandbox's "
                        f"{report.killed_for} limit after {report.duration_s:.1f}s")
    child = report.child
    if child is None:
        tail = report.log_tail.strip().splitlines()[-3:]
        raise SpecError(f"spec probe died (exit {report.returncode}): {' | '.join(tail) or 'no output'}")
    if not child.ok:
        failure = child.failure
        raise SpecError(f"spec fails at {failure.where if failure else ''}: {failure.reason if failure else ''}")
    return child.inputs, dict(child.screening_sizes)


def _last_report(stdout: str) -> ProbeReport | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            return ProbeReport.model_validate_json(line)
        except ValueError:
            continue
    return None


class _Normalizer(ast.NodeTransformer):
    """Drops docstrings and abstracts top-level integer sizes, so equal references match."""

    def _strip_doc(self, body: list[ast.stmt]) -> list[ast.stmt]:
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[1:] or [ast.Pass()]
        return body

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = self._strip_doc(node.body)
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) \
                    and type(stmt.value.value) is int:
                stmt.value = ast.Constant("<size>")
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.body = self._strip_doc(node.body)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.body = self._strip_doc(node.body)
        self.generic_visit(node)
        return node


def fingerprint(source: str | ast.Module) -> str:
    """Same value for references that differ only in comments, docstrings, layout or sizes.

    ``source`` may be the spec's tree (``kevolve.specfile.parse``); it is not modified."""
    tree = _Normalizer().visit(copy.deepcopy(source) if isinstance(source, ast.Module) else ast.parse(source))
    # cpu_shapes/test_cases are screening details, not the computation.
    tree.body = [s for s in tree.body if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and
                                              isinstance(s.targets[0], ast.Name) and
                                              s.targets[0].id in {"cpu_shapes", "test_cases", "atol", "rtol"})]
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()
