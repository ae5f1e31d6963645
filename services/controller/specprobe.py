"""Validating a submitted spec: statically, then by importing it in a sandboxed child.

A spec is user code, so it is only ever executed in a child process with a scrubbed
environment, resource limits and a deadline (``kevolve.sandbox``); the controller itself
only parses it. The error a user gets is the Python error their spec raised.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from kevolve import sandbox
from kevolve.specfile import SpecError, SpecOutline, check_outline



@dataclass(frozen=True)
class _Outcome:
    killed_for: str
    returncode: object
    duration_s: float
    stdout: str
    log_tail: str


@dataclass(frozen=True)
class ProbeResult:
    outline: SpecOutline
    inputs: int


# Specs that already passed, by exact source and sizes: resubmitting the same spec (the
# common case: several jobs, policies or platforms per spec) skips the ~seconds of a probe.
_PASSED: OrderedDict[str, ProbeResult] = OrderedDict()
_PASSED_MAX = 256


def probe(source: str, cpu_sizes: dict[str, int], timeout_s: float) -> ProbeResult:
    """Raise SpecError naming what is wrong; return the outline when the spec imports and runs."""
    out = check_outline(source)
    sizes = dict(cpu_sizes or out.cpu_sizes)
    unknown = sorted(set(sizes) - set(out.sizes))
    if unknown:
        raise SpecError(f"cpu size override names no module-level integer constant: {', '.join(unknown)}")
    key = hashlib.sha256(json.dumps([source, sorted(sizes.items())]).encode()).hexdigest()
    if key in _PASSED:
        _PASSED.move_to_end(key)
        return _PASSED[key]
    result = _run_probe(source, out, sizes, timeout_s)
    _PASSED[key] = result
    while len(_PASSED) > _PASSED_MAX:
        _PASSED.popitem(last=False)
    return result


def _run_probe(source: str, out: SpecOutline, sizes: dict[str, int], timeout_s: float) -> ProbeResult:
    with tempfile.TemporaryDirectory(prefix="kv-spec-") as tmp:
        spec_file = Path(tmp) / "spec.py"
        spec_file.write_text(source, encoding="utf-8")
        # A plain spawn (no preexec_fn) of a helper without gRPC; the helper applies the sandbox.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": sandbox.child_pythonpath(),
               "HOME": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run([sys.executable, "-m", "services.controller.spec_sandbox", str(spec_file),
                                   json.dumps(sizes), str(timeout_s)], capture_output=True, text=True,
                                  env=env, cwd=tmp, timeout=timeout_s + 30)
        except subprocess.TimeoutExpired as exc:
            raise SpecError(f"spec probe did not finish within {timeout_s:.0f}s") from exc
    outer = _last_json(done.stdout)
    if outer is None:
        raise RuntimeError(f"spec sandbox helper failed (exit {done.returncode}): {done.stderr[-2000:]}")
    result = _Outcome(str(outer.get("killed_for") or ""), outer.get("returncode"),
                      float(outer.get("duration_s") or 0.0), str(outer.get("stdout") or ""),
                      str(outer.get("log_tail") or ""))
    if result.killed_for:
        raise SpecError(f"spec probe killed ({result.killed_for}) after {result.duration_s:.1f}s: "
                        "importing the spec, building Model or get_inputs() must finish quickly")
    report = _last_json(result.stdout)
    if report is None:
        tail = result.log_tail.strip().splitlines()[-3:]
        raise SpecError(f"spec probe died (exit {result.returncode}): {' | '.join(tail) or 'no output'}")
    if not report.get("ok"):
        raise SpecError(f"spec fails at {report.get('where')}: {report.get('error')}")
    return ProbeResult(outline=out, inputs=int(report.get("inputs", 0)))


def _last_json(stdout: str) -> dict[str, object] | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
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


def fingerprint(source: str) -> str:
    """Same value for references that differ only in comments, docstrings, layout or sizes."""
    tree = _Normalizer().visit(ast.parse(source))
    # cpu_shapes/test_cases are screening details, not the computation.
    tree.body = [s for s in tree.body if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and
                                              isinstance(s.targets[0], ast.Name) and
                                              s.targets[0].id in {"cpu_shapes", "test_cases", "atol", "rtol"})]
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()
