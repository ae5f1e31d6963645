"""The offline backend: deterministic template instantiation from the traced spec.

generate() = trace the spec's Model in a child process (cached per spec source) -> lower
the fx graph to the IR -> keep the templates whose patterns match -> pick template and
tunables (tuning.py) -> render. Specs it cannot serve get a plain error naming the
operator or construct that no template implements, never a guessed kernel.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import structlog

from kevolve.config import REPO_ROOT
from kevolve.specfile import SpecError, check_outline
from kevolve.v1 import work_pb2
from services.generator.backends.base import Generation
from services.generator.offline.families import BUILDERS
from services.generator.offline.lower import Program, lower
from services.generator.offline.ops import Unsupported
from services.generator.offline.specparts import spec_parts
from services.generator.offline.templates import Template, load_templates
from services.generator.offline.tuning import choose

log = structlog.get_logger("generator.offline")


class TraceError(RuntimeError):
    """The spec could not be run/traced; the message says why."""


class TraceWorker:
    """A warm `python -m services.generator.tracer --serve` child, one request at a time.

    torch is imported once per worker rather than once per spec. A request that times out
    or kills the child (a hanging or crashing spec) costs only that worker: it is killed
    and the next request starts a fresh one.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.proc: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()

    async def _start(self) -> asyncio.subprocess.Process:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.generator.tracer", "--serve",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env=env, cwd=str(REPO_ROOT), start_new_session=True, limit=64 * 1024 * 1024,
        )

    async def trace(self, source: str, sizes: dict[str, int]) -> dict[str, Any]:
        async with self.lock:
            if self.proc is None or self.proc.returncode is not None:
                self.proc = await self._start()
            proc = self.proc
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write((json.dumps({"source": source, "sizes": sizes}) + "\n").encode())
                await proc.stdin.drain()
                line = await asyncio.wait_for(proc.stdout.readline(), timeout=self.timeout_s)
            except TimeoutError:
                await self._kill()
                raise TraceError(f"tracing the spec took longer than {self.timeout_s:.0f}s (cut off)") from None
            except (BrokenPipeError, ConnectionResetError):
                line = b""
            if not line:
                await self._kill()
                raise TraceError("the tracer process died while running the spec (crash or exit in spec code)")
        result: dict[str, Any] = json.loads(line.decode())
        if not result.get("ok"):
            raise TraceError(result.get("error") or "tracer failed without a message")
        return result

    async def _kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.proc = None

    async def close(self) -> None:
        async with self.lock:
            await self._kill()


def traced_op_names(traced: dict[str, Any]) -> list[str]:
    names = []
    for node in traced["nodes"]:
        if node["op"] == "call_module":
            names.append(traced["modules"].get(node["target"], {}).get("type", "?"))
        elif node["op"] in ("call_function", "call_method"):
            names.append(node["target"].lstrip("_") if node["target"] != "__getitem__" else "getitem")
    return names


class OfflineBackend:
    name = "offline"

    def __init__(self, templates_dir: Path, trace_timeout_s: float = 60.0, cache_size: int = 64) -> None:
        self.templates_dir = templates_dir
        self.trace_timeout_s = trace_timeout_s
        self._traces: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._cache_size = cache_size
        self._locks: dict[str, asyncio.Lock] = {}
        self._worker = TraceWorker(trace_timeout_s)
        load_templates(templates_dir)  # a malformed template fails at startup, not mid-job

    async def aclose(self) -> None:
        await self._worker.close()

    async def _trace(self, source: str) -> dict[str, Any]:
        outline = check_outline(source)
        sizes = outline.cpu_sizes
        key = hashlib.sha256(source.encode() + json.dumps(sizes, sort_keys=True).encode()).hexdigest()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent expansions of one job trace once
            if key in self._traces:
                self._traces.move_to_end(key)
                return self._traces[key]
            traced = await self._worker.trace(source, sizes)
            self._traces[key] = traced
            while len(self._traces) > self._cache_size:
                self._traces.popitem(last=False)
            return traced

    def matching(self, traced: dict[str, Any]) -> tuple[list[Template], Program | None, str]:
        ops = traced_op_names(traced)
        try:
            program: Program | None = lower(traced)
            why = ""
        except Unsupported as exc:
            program, why = None, str(exc)
        except Exception as exc:  # an fx graph shape the lowering did not foresee
            log.warning("lowering failed", error=repr(exc))
            program, why = None, f"the graph could not be lowered ({type(exc).__name__}: {exc})"
        found = [t for t in load_templates(self.templates_dir) if t.matches(program, ops)]
        if not found and not why:
            why = f"no template's pattern covers the op sequence [{program.signature() if program else ''}]"
        return found, program, why

    async def generate(self, request: work_pb2.GenerateRequest, prompt: str, spec_source: str,
                       parent_code: str | None) -> Generation:
        try:
            traced = await self._trace(spec_source)
        except (SpecError, TraceError) as exc:
            return Generation(code=None, error=f"offline: cannot trace the spec: {exc}")
        templates, program, why = self.matching(traced)
        ops = ", ".join(dict.fromkeys(traced_op_names(traced))) or "none"
        if not templates:
            return Generation(code=None, error=f"offline: unrecognized spec ({why}); traced ops: {ops}")
        try:
            parts = spec_parts(spec_source)
        except (Unsupported, SyntaxError) as exc:
            return Generation(code=None, error=f"offline: {exc}")
        errors = []
        remaining = list(templates)
        while remaining:
            template, tunables = choose(remaining, request)
            try:
                code = self.render(template, tunables, traced, spec_source, parts)
            except Unsupported as exc:
                errors.append(f"{template.name}: {exc}")
                remaining.remove(template)
                continue
            except Exception as exc:
                # Deterministic: a redelivery would fail the same way, so answer NO_CODE now.
                log.error("template rendering failed", template=template.name, error=repr(exc))
                errors.append(f"{template.name}: internal error {type(exc).__name__}: {exc}")
                remaining.remove(template)
                continue
            return Generation(code=code, tunables={"template": template.name, **tunables})
        return Generation(code=None, error="offline: matching templates cannot serve this spec: " + "; ".join(errors))

    def render(self, template: Template, tunables: dict[str, str], traced: dict[str, Any], spec_source: str,
               parts: Any) -> str:
        builder = BUILDERS.get(template.codegen)
        if builder is None:
            raise Unsupported(f"template {template.name} names unknown codegen {template.codegen!r}")
        # Lower afresh: builders annotate the program (roles), so each render gets its own.
        program = lower(traced) if not template.raw_graph else None
        context = builder(program, parts, tunables) if program is not None else builder(traced, parts, tunables)
        return str(template.source.render(**context))
