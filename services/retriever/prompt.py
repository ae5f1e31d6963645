"""Prompt synthesis: render kb/prompts/{system,user}.md.j2 from the diagnosis and the retrieval.

The context mode decides which history the user prompt shows:

- PARENT_TRAJECTORY: the current kernel and its ancestors' outcomes;
- SIBLING_COMPARE: the current kernel and its siblings (with the best sibling's code);
- TRAJECTORY_AND_SIBLINGS: both;
- FRESH_START: the spec alone (no kernel, no history), to escape a local optimum.

Templates use StrictUndefined: a template that names a variable this module does not pass
fails loudly at render time instead of silently dropping text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from kevolve.platforms import Platform
from kevolve.promptdoc import PromptDoc
from kevolve.v1 import common_pb2, work_pb2
from services.retriever.memory import summarize_tried
from services.retriever.search import Retrieval

MODES = {
    common_pb2.PARENT_TRAJECTORY: "PARENT_TRAJECTORY",
    common_pb2.SIBLING_COMPARE: "SIBLING_COMPARE",
    common_pb2.TRAJECTORY_AND_SIBLINGS: "TRAJECTORY_AND_SIBLINGS",
    common_pb2.FRESH_START: "FRESH_START",
}


@dataclass
class PromptInputs:
    request: work_pb2.ExpandRequest
    platform: Platform
    spec_source: str
    ops: list[str]
    diagnosis: work_pb2.Diagnosis
    retrieval: Retrieval
    parent_code: str | None
    best_sibling_code: tuple[common_pb2.NodeSummary, str] | None
    response_format: str        # "full" or "edit"
    max_code_chars: int
    error_excerpt: str = ""
    # The best kernel of the job so far (its summary and code), when it is neither the
    # current kernel nor the best sibling shown already.
    best_code: tuple[common_pb2.NodeSummary, str] | None = None
    figures: str = ""                                              # the target's key hardware numbers
    toolchain: dict[str, str] = field(default_factory=dict)        # versions candidates run with


class PromptBuilder:
    def __init__(self, prompts_dir: Path) -> None:
        if not (prompts_dir / "system.md.j2").is_file() or not (prompts_dir / "user.md.j2").is_file():
            raise FileNotFoundError(f"prompt templates system.md.j2 and user.md.j2 are required in {prompts_dir}")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(prompts_dir)),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            autoescape=False,  # noqa: S701 - markdown for an LLM, not HTML
        )

    def build(self, inputs: PromptInputs) -> PromptDoc:
        mode = effective_mode(inputs.request)
        system = self.env.get_template("system.md.j2").render(
            platform=inputs.platform, constraints=inputs.retrieval.constraints)
        user = self.env.get_template("user.md.j2").render(**self._user_context(inputs, mode))
        meta = {
            "retrieved_docs": inputs.retrieval.doc_ids,
            "scores": inputs.retrieval.scores,
            "response_format": inputs.response_format,
            "context_mode": mode,
            "category": inputs.diagnosis.category,
            "platform": inputs.platform.name,
            "job_id": inputs.request.job_id,
            "expansion_id": inputs.request.expansion_id,
        }
        return PromptDoc(system=_tidy(system), user=_tidy(user), meta=meta)

    def _user_context(self, inputs: PromptInputs, mode: str) -> dict[str, Any]:
        request = inputs.request
        show_parent = mode != "FRESH_START" and bool(request.parent.node_id)
        parent = None
        if show_parent:
            node = request.parent
            parent = {
                "node_id": node.node_id,
                "verdict": common_pb2.Verdict.Name(node.verdict) if node.verdict else "PENDING",
                "fitness": node.fitness,
                "tunables": ", ".join(f"{k}={v}" for k, v in sorted(node.tunables.items())),
                "code": _clip(inputs.parent_code, inputs.max_code_chars) if inputs.parent_code else "",
            }
        trajectory = summarize_tried(list(request.ancestors), request.job_id) if mode in (
            "PARENT_TRAJECTORY", "TRAJECTORY_AND_SIBLINGS") else []
        siblings = summarize_tried(list(request.siblings), request.job_id) if mode in (
            "SIBLING_COMPARE", "TRAJECTORY_AND_SIBLINGS") else []
        best_sibling = None
        if siblings and inputs.best_sibling_code:
            node, code = inputs.best_sibling_code
            best_sibling = {"node_id": node.node_id, "fitness": node.fitness, "code": _clip(code, inputs.max_code_chars)}
        elites = summarize_tried(list(request.elites), request.job_id) if mode != "FRESH_START" else []
        best = None
        if inputs.best_code and mode != "FRESH_START":
            node, code = inputs.best_code
            best = {"node_id": node.node_id, "fitness": node.fitness, "code": _clip(code, inputs.max_code_chars)}
        diag = inputs.diagnosis
        return {
            "allow_tf32": request.allow_tf32,
            "spec_name": request.spec_name or "kernel",
            "platform": inputs.platform,
            "spec_source": inputs.spec_source.strip(),
            "ops": inputs.ops,
            "mode": mode,
            "parent": parent,
            "diagnosis": {
                "category": diag.category,
                "compile_error_class": diag.compile_error_class,
                "correctness_pattern": diag.correctness_pattern,
                "bottleneck": diag.bottleneck,
                "evidence": diag.evidence,
                # The traceback is shown in its own block, not squeezed into a bullet.
                "facts": sorted((k, v) for k, v in diag.facts.items() if k != "traceback_tail"),
            },
            "error_excerpt": inputs.error_excerpt if show_parent else "",
            "trajectory": trajectory,
            "siblings": siblings,
            "best_sibling": best_sibling,
            "elites": elites,
            "best": best,
            "figures": inputs.figures,
            "toolchain": sorted(inputs.toolchain.items()),
            "knowledge": inputs.retrieval.sections,
            "samples": inputs.retrieval.samples,
            "response_format": inputs.response_format,
        }


def effective_mode(request: work_pb2.ExpandRequest) -> str:
    """The controller's mode; unspecified means PARENT_TRAJECTORY (FRESH_START for a root expansion)."""
    if not request.parent.node_id:
        return "FRESH_START"
    return MODES.get(request.context_mode, "PARENT_TRAJECTORY")


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n# ... ({len(text) - limit} more characters not shown)"


def _tidy(text: str) -> str:
    # Only runs of 4+ newlines (template seams) are squeezed; code keeps its own 2 blank lines.
    return re.sub(r"\n{4,}", "\n\n\n", text).strip() + "\n"
