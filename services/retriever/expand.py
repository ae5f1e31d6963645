"""One expansion, end to end: fetch artifacts, diagnose, search the KB, render and store the prompt.

Kept free of NATS so it can be driven directly by tests and tools; handlers.py wraps it.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kevolve import promptdoc
from kevolve.objstore import ObjectNotFound, ObjectStore
from kevolve.platforms import Platform, UnknownPlatform, get_platform
from kevolve.reports import EvaluationReport
from kevolve.v1 import common_pb2, work_pb2
from services.retriever.config import RetrieverSettings
from services.retriever.memory import ParentArtifacts, diagnose
from services.retriever.prompt import PromptBuilder, PromptInputs, effective_mode
from services.retriever.search import KnowledgeBase, Reranker
from services.retriever.specops import op_terms, spec_ops


class ExpansionRejected(ValueError):
    """The request can never be served (unknown platform, missing spec): answer, don't retry."""


@dataclass
class Expansion:
    generate: work_pb2.GenerateRequest
    prompt: promptdoc.PromptDoc


class Expander:
    def __init__(self, store: ObjectStore, kb_dir: Path, settings: RetrieverSettings,
                 reranker: Reranker | None = None) -> None:
        self.store = store
        self.kb_dir = kb_dir
        self.settings = settings
        self.kb = KnowledgeBase(kb_dir)
        self.prompts = PromptBuilder(kb_dir / "prompts")
        self.reranker = reranker

    async def _text(self, key: str) -> str:
        data = await asyncio.to_thread(self.store.get, key)
        return data.decode("utf-8", errors="replace")

    async def _optional_text(self, key: str, what: str, missing: list[str]) -> str | None:
        if not key:
            return None
        try:
            return await self._text(key)
        except ObjectNotFound:
            missing.append(f"{what} ({key}): not found in the object store")
            return None

    async def _optional_json(self, key: str, what: str, missing: list[str]) -> dict[str, Any] | None:
        text = await self._optional_text(key, what, missing)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            missing.append(f"{what} ({key}): not valid JSON ({exc.msg})")
            return None
        if not isinstance(value, dict):
            missing.append(f"{what} ({key}): not a JSON object")
            return None
        return value

    def platform(self, name: str) -> Platform:
        try:
            return get_platform(self.kb_dir, name)
        except UnknownPlatform as exc:
            raise ExpansionRejected(str(exc)) from exc

    async def expand(self, request: work_pb2.ExpandRequest) -> Expansion:
        platform = self.platform(request.platform)
        if not request.spec_key:
            raise ExpansionRejected("ExpandRequest has no spec_key")
        try:
            spec_source = await self._text(request.spec_key)
        except ObjectNotFound as exc:
            raise ExpansionRejected(f"spec {request.spec_key} is not in the object store") from exc

        parent: ParentArtifacts | None = None
        if request.parent.node_id:
            missing: list[str] = []
            node = request.parent
            parent = ParentArtifacts(
                node=node,
                code=await self._optional_text(node.code_key, "code", missing),
                eval_report=await self._optional_json(node.eval_report_key, "eval_report", missing),
                profile_report=await self._optional_json(node.profile_report_key, "profile_report", missing),
                missing=missing,
            )
        diagnosis = diagnose(parent, request, self.settings.max_log_chars)
        ops = spec_ops(spec_source)
        retrieval = await asyncio.to_thread(
            self.kb.search, list(diagnosis.keywords), op_terms(ops), platform.kb_hardware,
            budget_tokens=self.settings.token_budget, top_k=self.settings.top_k, samples_k=self.settings.samples_k,
            min_hardware=self.settings.min_hardware_sections, reranker=self.reranker,
        )
        mode = effective_mode(request)
        parent_code = parent.code if parent else None
        response_format = self._response_format(request, parent_code, mode)
        best_sibling = await self._best_sibling(request, mode)
        error_excerpt = diagnosis.facts.get("traceback_tail", "")
        if not error_excerpt and parent and parent.eval_report and diagnosis.category in ("compile_error", "crashed",
                                                                                           "timeout"):
            error_excerpt = parent.eval_report.log[-self.settings.max_log_chars:]
        figures = self.kb.key_figures(platform.kb_hardware)
        doc = self.prompts.build(PromptInputs(
            request=request, platform=platform, spec_source=spec_source, ops=ops, diagnosis=diagnosis,
            retrieval=retrieval, parent_code=parent_code, best_sibling_code=best_sibling,
            response_format=response_format, max_code_chars=self.settings.max_code_chars,
            error_excerpt=error_excerpt[-self.settings.max_log_chars:],
            best_code=await self._best_elite(request, best_sibling),
            figures=figures.text if figures and figures not in retrieval.sections else "",
            toolchain=toolchain(parent.eval_report if parent else None),
        ))
        doc.meta["diagnosis"] = {"category": diagnosis.category, "keywords": list(diagnosis.keywords)}
        prompt_key = await asyncio.to_thread(self.store.put, promptdoc.render(doc).encode(), "prompts", ".md")
        generate = work_pb2.GenerateRequest(
            expand=request, prompt_key=prompt_key, diagnosis=diagnosis, retrieved_docs=retrieval.doc_ids,
        )
        return Expansion(generate=generate, prompt=doc)

    def _response_format(self, request: work_pb2.ExpandRequest, parent_code: str | None, mode: str) -> str:
        if not parent_code or mode == "FRESH_START":
            return "full"  # nothing to edit against
        if self.settings.response_format != "auto":
            return self.settings.response_format
        # Edits suit tuning a working kernel; a broken one is usually better rewritten whole.
        return "edit" if request.parent.verdict == common_pb2.PASSED else "full"

    async def _best_sibling(self, request: work_pb2.ExpandRequest,
                            mode: str) -> tuple[common_pb2.NodeSummary, str] | None:
        if mode not in ("SIBLING_COMPARE", "TRAJECTORY_AND_SIBLINGS"):
            return None
        passed = [s for s in request.siblings if s.verdict == common_pb2.PASSED and s.code_key]
        if not passed:
            return None
        best = max(passed, key=lambda s: s.fitness)
        code = await self._optional_text(best.code_key, "sibling code", [])
        return (best, code) if code is not None else None

    async def _best_elite(self, request: work_pb2.ExpandRequest, shown: tuple[common_pb2.NodeSummary, str] | None
                          ) -> tuple[common_pb2.NodeSummary, str] | None:
        """The job's best kernel so far with its code, unless the prompt shows it already (it
        is the current kernel or the best sibling)."""
        passed = [e for e in request.elites if e.verdict == common_pb2.PASSED and e.code_key]
        if not passed:
            return None
        best = max(passed, key=lambda e: e.fitness)
        if best.node_id == request.parent.node_id or (shown is not None and shown[0].node_id == best.node_id):
            return None
        code = await self._optional_text(best.code_key, "best kernel's code", [])
        return (best, code) if code is not None else None


def toolchain(eval_report: EvaluationReport | None) -> dict[str, str]:
    """The torch and Triton versions candidates run with: as the evaluator reported them for
    the current kernel, else those installed beside this service (the images share them)."""
    environment = dict(eval_report.result.environment) if eval_report is not None else {}
    found = {name: environment[name] for name in ("torch", "triton", "cuda", "gpu") if environment.get(name)}
    for name in ("torch", "triton"):
        if name not in found:
            try:
                found[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                pass
    return found
