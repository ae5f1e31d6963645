"""The general lowering as a generation step: capture the spec in the sandbox, lower it.

The offline backend's templates are the fast paths for the families they were written for;
every spec they do not serve comes here. The spec is captured once per job in a sandboxed
child (``services.generator.lowering.capture``: torch.export at each shape the evaluator
will use), and the kernel program is written from that capture in this process, which runs
none of the spec's code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import tomllib
import json
import shutil
import sys
import tempfile
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

import jinja2
import structlog

from kevolve.exec import sandbox
from kevolve.specfile import SpecOutline, check_outline
from services.generator.lowering import Unsupported, program_source
from services.generator.offline.templates import Template
from services.generator.lowering.schema import Capture
from services.generator.lowering.tunables import Tunables, space
from services.generator.offline.tuning import GENERAL_CODEGEN

log = structlog.get_logger("generator.general")


def capture_cases(outline: SpecOutline, cpu_sizes: dict[str, int] | None = None) -> list[tuple[str, dict[str, int]]]:
    """Every shape the evaluator runs a candidate at: the spec's own sizes and each declared
    test case, each at production sizes (GPU pools) and at screening sizes (interpreter
    pools: the screening sizes override the case's)."""
    declared: list[tuple[str, dict[str, int]]] = [("default", {})]
    for i, case in enumerate(outline.test_cases):
        sizes = case.get("sizes", {})
        if isinstance(sizes, dict):
            declared.append((str(case.get("name", f"case{i}")), {str(k): int(v) for k, v in sizes.items()}))
    small = dict(cpu_sizes or outline.cpu_sizes)
    cases: list[tuple[str, dict[str, int]]] = []
    seen: set[str] = set()
    for name, sizes in declared:
        for label, chosen in ((name, sizes), (f"{name}@screen", {**sizes, **small})):
            key = json.dumps(sorted(chosen.items()))
            if key not in seen:
                seen.add(key)
                cases.append((label, chosen))
    return cases


class GeneralLowering:
    """Captures specs in the sandbox (cached per tenant and spec) and writes kernel programs."""

    def __init__(self, scratch_dir: Path, timeout_s: float = 120.0, memory_mb: int = 4096,
                 isolation: sandbox.Isolation = "required", cache_size: int = 32) -> None:
        self.scratch_dir = scratch_dir
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.isolation = isolation
        self._cache: OrderedDict[str, Capture] = OrderedDict()
        self._cache_size = cache_size
        self._locks: dict[str, asyncio.Lock] = {}

    async def capture(self, source: str, cases: list[tuple[str, dict[str, int]]], tenant: str) -> Capture:
        key = hashlib.sha256(json.dumps([tenant, source, cases]).encode()).hexdigest()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent expansions of one job capture once
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            result = await asyncio.to_thread(self._capture, source, cases, tenant)
            self._cache[key] = result
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
            return result

    def _capture(self, source: str, cases: list[tuple[str, dict[str, int]]], tenant: str) -> Capture:
        work = sandbox.tenant_dir(self.scratch_dir, tenant) / uuid.uuid4().hex
        work.mkdir(parents=True)
        try:
            (work / "request.json").write_text(json.dumps({"source": source, "cases": cases}))
            try:
                run = sandbox.run(
                    [sys.executable, "-m", "services.generator.lowering.capture", "request.json"],
                    scratch=work,
                    limits=sandbox.Limits(timeout_s=self.timeout_s, memory_mb=self.memory_mb, max_procs=32),
                    env={"PYTHONPATH": sandbox.child_pythonpath(), **sandbox.ONE_THREAD},
                    isolation=self.isolation,
                )
            except sandbox.IsolationUnavailable as exc:
                return Capture(ok=False, error=str(exc), where="sandbox")
            result = work / "capture.json"
            if run.killed_for == "timeout":
                return Capture(ok=False, error=f"capturing the spec took longer than {self.timeout_s:.0f}s",
                               where="capture")
            if run.killed_for:
                return Capture(ok=False, error=f"capturing the spec passed the {run.killed_for} limit", where="capture")
            if not result.exists():
                tail = " | ".join(run.log_tail.strip().splitlines()[-3:]) or "no output"
                return Capture(ok=False, error=f"the capture process died (exit {run.returncode}): {tail}",
                               where="capture")
            return Capture.model_validate_json(result.read_text())
        finally:
            shutil.rmtree(work, ignore_errors=True)

    async def generate(self, spec_source: str, spec_name: str, tenant: str, cpu_sizes: dict[str, int] | None = None,
                       tuned: dict[str, str] | None = None,
                       allow_tf32: bool = False) -> tuple[str | None, str, dict[str, Any]]:
        """(code, error, details): the kernel program under the tunables ``tuned`` (the
        lowering's own choices where None), or why there is none. ``allow_tf32``: the job lets
        float32 products use TF32."""
        outline = check_outline(spec_source)
        cases = capture_cases(outline, cpu_sizes)
        captured = await self.capture(spec_source, cases, tenant)
        if not captured.ok:
            return None, f"general lowering: {captured.error} (case {captured.where})", {}
        try:
            choices = dataclasses.replace(Tunables.from_strings(tuned or {}),
                                          float32_dot="tf32" if allow_tf32 else "tf32x3")
            code = await asyncio.to_thread(program_source, spec_source, spec_name, captured, choices)
        except (Unsupported, ValueError) as exc:
            return None, f"general lowering: {exc}", {}
        except Exception as exc:  # noqa: BLE001 - a lowering defect: reported, never a guessed kernel
            log.error("lowering failed", error=repr(exc))
            return None, f"general lowering failed ({type(exc).__name__}: {exc})", {}
        return code, "", {"cases": str(len(captured.cases))}


def search_space(kb_dir: Path) -> Template:
    """The general lowering's tunables as a template the offline search moves through (one
    knob per expansion, in the direction the diagnosis points: ``offline/tuning.py``)."""
    raw = tomllib.loads((kb_dir / "lowering" / "tunables.toml").read_text())
    return Template(name="general", description=raw.get("description", ""), codegen=GENERAL_CODEGEN, priority=-1,
                    requires=[], requires_any=[], forbids=[], signature="", traced_ops=[], traced_any=[],
                    tunables=space(kb_dir), source=jinja2.Template(""))


def default_scratch() -> Path:
    return Path(tempfile.gettempdir()) / "kevolve-generator"
