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
import shutil
import sys
import tempfile
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import structlog

from kevolve.exec import sandbox
from kevolve.specfile import SpecError, check_outline
from kevolve.v1 import common_pb2, work_pb2
from services.generator.backends.base import Generation
from services.generator.backends.distinct import (
    GENERAL_RENDER_BUDGET_S, MAX_GENERAL_RENDERS, MAX_TEMPLATE_RENDERS, pick_new_code)
from services.generator.backends.general import GeneralLowering, search_space
from services.generator.offline.families import BUILDERS
from services.generator.offline.lower import Program, lower
from services.generator.offline.ops import DoesNotFit, Unsupported
from services.generator.offline.specparts import spec_parts
from services.generator.offline.templates import Template, load_templates
from services.generator.offline.tuning import known_nodes, preferences
from services.generator.tracer import RESULT_FILE as TRACE_RESULT_FILE
from services.generator.tracer import TraceResult

log = structlog.get_logger("generator.offline")


class TraceError(RuntimeError):
    """The spec could not be run/traced; the message says why."""


class TraceWorker:
    """Traces a spec in the sandbox: one fresh contained child per spec (results are cached
    per spec source, so a job traces once).

    The spec is user code: the child gets no network, an environment built from nothing and
    a filesystem view holding only the Python environment and a scratch directory of the
    tenant's own (``kevolve.exec.sandbox``). A fresh process per trace means nothing one spec
    leaves behind (patched modules, threads) meets the next one.
    """

    def __init__(self, timeout_s: float, scratch_dir: Path, memory_mb: int = 4096,
                 isolation: sandbox.Isolation = "required") -> None:
        self.timeout_s = timeout_s
        self.scratch_dir = scratch_dir
        self.memory_mb = memory_mb
        self.isolation = isolation

    async def trace(self, source: str, sizes: dict[str, int], tenant: str = "default",
                    meta_only: bool = False) -> dict[str, Any]:
        return await asyncio.to_thread(self._trace, source, sizes, tenant, meta_only)

    def _trace(self, source: str, sizes: dict[str, int], tenant: str, meta_only: bool = False) -> dict[str, Any]:
        work = sandbox.tenant_dir(self.scratch_dir, tenant) / uuid.uuid4().hex
        work.mkdir(parents=True)
        try:
            (work / "request.json").write_text(json.dumps({"source": source, "sizes": sizes, "meta_only": meta_only}))
            try:
                run = sandbox.run(
                    [sys.executable, "-m", "services.generator.tracer", "request.json"],
                    scratch=work,
                    limits=sandbox.Limits(timeout_s=self.timeout_s, memory_mb=self.memory_mb, max_procs=32),
                    env={"PYTHONPATH": sandbox.child_pythonpath(), "TRITON_INTERPRET": "1", **sandbox.ONE_THREAD},
                    isolation=self.isolation,
                )
            except sandbox.IsolationUnavailable as exc:
                raise TraceError(str(exc)) from exc
            if run.killed_for == "timeout":
                raise TraceError(f"tracing the spec took longer than {self.timeout_s:.0f}s (cut off)")
            if run.killed_for:
                raise TraceError(f"tracing the spec was stopped: it passed the {run.killed_for} limit")
            result = TraceResult.read(work / TRACE_RESULT_FILE)
            if result is None:
                # The tail is the child's own output: what the spec printed and its traceback.
                tail = " | ".join(run.log_tail.strip().splitlines()[-3:]) or "no output"
                raise TraceError(f"the tracer process died while running the spec (exit {run.returncode}): {tail}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if not result.ok:
            raise TraceError((result.failure.reason if result.failure else "") or "tracer failed without a message")
        return result.traced

    async def close(self) -> None:
        """Nothing stays running between traces."""


def refused_templates(request: work_pb2.GenerateRequest, templates: list[Template]) -> dict[str, str]:
    """The templates whose candidate in this job failed at run time with the template's own
    refusal (``ValueError: <template>: ...``, as a template's wrapper raises for operands it
    cannot take), with that reason."""
    refused: dict[str, str] = {}
    for node in known_nodes(request):
        name = node.tunables.get("template", "")
        if node.verdict == common_pb2.RUNTIME_ERROR and name and f"ValueError: {name}: " in node.summary:
            refused[name] = node.summary[node.summary.index(f"{name}: "):][:300]
    return {t.name: refused[t.name] for t in templates if t.name in refused}


def traced_op_names(traced: dict[str, Any]) -> list[str]:
    names = []
    for node in traced["nodes"]:
        if node["op"] == "call_module":
            names.append(traced["modules"].get(node["target"], {}).get("type", "?"))
        elif node["op"] in ("call_function", "call_method"):
            names.append(node["target"].lstrip("_") if node["target"] != "__getitem__" else "getitem")
    return names


def fewer_stages(template: Template, tunables: dict[str, str]) -> list[str]:
    """The template's num_stages values below the set's, deepest first."""
    try:
        current = int(tunables.get("num_stages", ""))
    except ValueError:
        return []
    lower = [v for v in template.tunables.get("num_stages", []) if v.isdigit() and int(v) < current]
    return sorted(lower, key=int, reverse=True)


def _is_defaults(template: Template, tunables: dict[str, str]) -> bool:
    """Whether a set is the template's defaults, up to the precision the job's policy sets."""
    def strip(tun: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in tun.items() if k != "PRECISION"}

    return strip(tunables) == strip(template.defaults())


class OfflineBackend:
    name = "offline"

    def __init__(self, templates_dir: Path, trace_timeout_s: float = 60.0, cache_size: int = 64,
                 scratch_dir: Path | None = None, isolation: sandbox.Isolation = "required",
                 trace_memory_mb: int = 4096) -> None:
        self.templates_dir = templates_dir
        self.trace_timeout_s = trace_timeout_s
        self._traces: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._cache_size = cache_size
        self._locks: dict[str, asyncio.Lock] = {}
        scratch = scratch_dir or Path(tempfile.gettempdir()) / "kevolve-generator"
        self._worker = TraceWorker(trace_timeout_s, scratch, memory_mb=trace_memory_mb, isolation=isolation)
        # Every spec no template serves goes through the general lowering.
        self._general = GeneralLowering(scratch, timeout_s=max(trace_timeout_s, 120.0), memory_mb=trace_memory_mb,
                                        isolation=isolation)
        load_templates(templates_dir)  # a malformed template fails at startup, not mid-job
        self._general_space = search_space(templates_dir.parent)

    async def aclose(self) -> None:
        await self._worker.close()

    async def _trace(self, source: str, tenant: str = "default", cpu_sizes: dict[str, int] | None = None,
                     production: bool = False) -> dict[str, Any]:
        """The spec's fx graph at the screening sizes (``cpu_sizes``, else the spec's own
        ``cpu_shapes``), or at its own sizes (``production``: shapes propagated on meta
        tensors alone, nothing computed; a spec with an op that has no meta kernel has no
        such trace)."""
        outline = check_outline(source)
        sizes = {} if production else dict(cpu_sizes or outline.cpu_sizes)
        # Per tenant: one tenant's trace of a spec is never served to another.
        key = hashlib.sha256(json.dumps([tenant, source, sorted(sizes.items()), production]).encode()).hexdigest()
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent expansions of one job trace once
            if key in self._traces:
                self._traces.move_to_end(key)
                return self._traces[key]
            try:
                traced = await self._worker.trace(source, sizes, tenant, meta_only=production)
            except TraceError as exc:
                if not production:
                    raise
                # Kept as "none" ({}), so that the job's later expansions do not trace again.
                log.info("no trace at the spec's own sizes", error=str(exc)[:200])
                traced = {}
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
        tenant = request.expand.tenant or "default"
        try:
            traced = await self._trace(spec_source, tenant, dict(request.expand.cpu_sizes))
        except SpecError as exc:
            return Generation(code=None, error=f"offline: cannot use the spec: {exc}")
        except TraceError as exc:
            if not str(exc).startswith("torch.fx cannot trace"):
                return Generation(code=None, error=f"offline: cannot trace the spec: {exc}")
            # fx cannot follow this forward; torch.export may (the general lowering says why if not).
            return await self._general_program(request, spec_source, "")
        templates, program, why = self.matching(traced)
        if not templates:
            return await self._general_program(request, spec_source, why)
        try:
            parts = spec_parts(spec_source)
        except (Unsupported, SyntaxError) as exc:
            return await self._general_program(request, spec_source, str(exc))
        production = await self._production_trace(spec_source, tenant, dict(request.expand.cpu_sizes))
        # A template that refused this spec's operands in an earlier candidate of the job
        # (its own ValueError, naming itself: a TMA load of rows not 16-byte aligned) would
        # refuse them again, whatever its tunables.
        failed: dict[str, str] = refused_templates(request, templates)  # name -> why it cannot serve
        last_misfit: dict[str, str] = {}  # name -> why its last tunable set tried did not fit
        misfits: set[int] = set()  # id() of the tunable sets whose tiles did not fit

        general = self._general_tries(request, spec_source, failed)

        async def render(template: Template, tunables: dict[str, str]) -> str | None:
            if template is self._general_space:
                return await general(tunables)
            try:
                return self.render(template, tunables, traced, spec_source, parts, production)
            except DoesNotFit as exc:
                last_misfit[template.name] = f"{template.name}: {exc}"   # its other sets may fit
                misfits.add(id(tunables))
            except Unsupported as exc:
                failed[template.name] = f"{template.name}: {exc}"
            except Exception as exc:
                # Deterministic: a redelivery would fail the same way, so answer NO_CODE now.
                log.error("template rendering failed", template=template.name, error=repr(exc))
                failed[template.name] = f"{template.name}: internal error {type(exc).__name__}: {exc}"
            return None

        # Read lazily: once a template fails, its other options are passed over unrendered.
        def options() -> Iterator[tuple[Template, dict[str, str]]]:
            # The general lowering is the last alternative of every spec a template serves: a
            # family's template can lose to it (float32 products split once, a whole-spec fusion)
            # or fail where it does not (a tile the template's fit check passed that the GPU
            # refuses). The search turns to it from a broken or slow template parent (tuning.py).
            choices = [*templates, self._general_space]
            for t, tun in preferences(choices, request):
                if t.name in failed:
                    if all(c.name in failed for c in choices):
                        return  # nothing left that could render
                    continue
                yield t, tun
                # A template's defaults whose pipeline overflows shared memory give way to the
                # same set with fewer stages (what Triton's own error advises): a descriptor-fed
                # template's four default stages of float32 tiles fit no GPU, three do. Other
                # sets that do not fit are only passed over (renders are counted).
                if not _is_defaults(t, tun):
                    continue
                for stages in fewer_stages(t, tun):
                    if id(tun) not in misfits:
                        break
                    tun = {**tun, "num_stages": stages}
                    yield t, tun

        found = await pick_new_code(options(), render, request.expand, MAX_TEMPLATE_RENDERS)
        if found is not None:
            template, tunables, code = found
            return Generation(code=code, tunables={"template": template.name, **tunables})
        general_error = failed.pop(self._general_space.name, "")
        why = "; ".join([*failed.values(), *last_misfit.values()])
        if general_error:  # tried among the options already: the same error again
            return Generation(code=None, error=f"offline: no template serves it ({why}); {general_error}")
        return await self._general_program(request, spec_source, why)

    def _general_tries(self, request: work_pb2.GenerateRequest, spec_source: str,
                       failed: dict[str, str]) -> Callable[[dict[str, str]], Awaitable[str | None]]:
        """A render of the general lowering, held to its own render count and time budget (a
        program per try, not a template fill): among a template search's options, and for a
        spec no template serves. Its first failure marks it ``failed`` and ends its tries: the
        same spec fails under every tunable."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GENERAL_RENDER_BUDGET_S
        tries = {"renders": 0, "rendered": 0}

        async def render(tuned: dict[str, str]) -> str | None:
            out_of_tries = tries["renders"] >= MAX_GENERAL_RENDERS or (tries["renders"] and loop.time() > deadline)
            if out_of_tries or self._general_space.name in failed:
                return None
            tries["renders"] += 1
            code, error, _details = await self._general.generate(
                spec_source, request.expand.spec_name or "spec", request.expand.tenant or "default",
                cpu_sizes=dict(request.expand.cpu_sizes), tuned=tuned, allow_tf32=request.expand.allow_tf32)
            if code is None and not tries["rendered"]:
                failed[self._general_space.name] = error
            tries["rendered"] += code is not None
            return code

        return render

    async def _general_program(self, request: work_pb2.GenerateRequest, spec_source: str, why: str) -> Generation:
        """The general lowering's kernel program for a spec no template serves: its tunables
        moved from the parent's, one knob at a time, as the template search moves them."""
        failed: dict[str, str] = {}
        general = self._general_tries(request, spec_source, failed)

        async def render(_: Template, tuned: dict[str, str]) -> str | None:
            return await general(tuned)

        found = await pick_new_code(preferences([self._general_space], request), render, request.expand,
                                    MAX_GENERAL_RENDERS)
        if found is None:
            no_template = f"no template serves it ({why}); " if why else ""
            return Generation(code=None,
                              error=f"offline: {no_template}{failed.get(self._general_space.name, 'no code')}")
        _, tuned, code = found
        return Generation(code=code, tunables={"template": "general", **tuned})

    async def _production_trace(self, source: str, tenant: str, cpu_sizes: dict[str, int]) -> dict[str, Any] | None:
        """The graph at the spec's own sizes, where the screening trace was at smaller ones:
        a template's tiles are checked against it (a row tile that fits the screening width
        can overflow shared memory at the spec's). None where the spec has no smaller sizes or
        its own cannot be traced here (too large for the tracer's limits): then the screening
        trace's checks are all there is, as before."""
        if not (cpu_sizes or check_outline(source).cpu_sizes):
            return None
        return await self._trace(source, tenant, production=True) or None

    def render(self, template: Template, tunables: dict[str, str], traced: dict[str, Any], spec_source: str,
               parts: Any, production: dict[str, Any] | None = None) -> str:
        builder = BUILDERS.get(template.codegen)
        if builder is None:
            raise Unsupported(f"template {template.name} names unknown codegen {template.codegen!r}")
        # Lower afresh: builders annotate the program (roles), so each render gets its own.
        program = lower(traced) if not template.raw_graph else None
        context = builder(program, parts, tunables) if program is not None else builder(traced, parts, tunables)
        if production is not None:
            self._fits_at_production(builder, template, tunables, production, parts)
        return str(template.source.render(**context))

    @staticmethod
    def _fits_at_production(builder: Any, template: Template, tunables: dict[str, str], production: dict[str, Any],
                            parts: Any) -> None:
        """Raises DoesNotFit where the template's tiles at these tunables do not fit at the
        spec's own sizes, Unsupported where the template cannot serve them at all (a row wider
        than a tensor descriptor spans). Any other error of this check is left to the
        evaluator: the kernel was written from the screening trace."""
        try:
            builder(lower(production) if not template.raw_graph else production, parts, tunables)
        except Unsupported as exc:
            raise type(exc)(f"at the spec's own sizes, {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.debug("template not checked at the spec's own sizes", template=template.name, error=repr(exc))
