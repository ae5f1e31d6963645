"""Export a job's result as ONE self-contained module that dispatches per input shape.

KernelEvolve's kernels win on some production shapes and lose on others, and the paper
keeps a PyTorch fallback where a kernel underperforms. So the export picks, per measured
test case, the verified candidate with the highest fitness on that case, and keeps the
reference where none beat it (fitness <= 1.0) or the case was not measured. The engine/CLI
passes plain data from the DB; nothing is executed here (the candidates are untrusted code
and run only in the evaluator's sandbox or in the user's own process, via the export).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from kevolve.reports import EvaluationReport

TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class ExportCase:
    name: str                                   # test case name (the spec's own shapes: "default")
    sizes: dict[str, int] = field(default_factory=dict)   # overrides of the spec's size constants


@dataclass
class ExportCandidate:
    node_id: str
    code: str
    case_fitness: dict[str, float]              # case name -> speedup over the reference
    passed: bool = True                         # final verdict PASSED (and approved if suspicious)


@dataclass
class Choice:
    case: str
    node_id: str | None                         # None = the reference
    fitness: float | None                       # best verified speedup measured here; None = not measured

    def describe(self) -> str:
        if self.node_id:
            return f"{self.case}: {self.node_id} ({self.fitness:.2f}x)"
        if self.fitness is None:
            return f"{self.case}: reference (not measured)"
        return f"{self.case}: reference (best kernel only {self.fitness:.2f}x)"


def choose_per_case(cases: list[ExportCase], candidates: list[ExportCandidate]) -> list[Choice]:
    """Best verified candidate per case; ties go to the earlier candidate in the list."""
    out = []
    for case in cases:
        measured = [(c.case_fitness[case.name], -i, c) for i, c in enumerate(candidates)
                    if c.passed and c.case_fitness.get(case.name, 0.0) > 0]
        if not measured:
            out.append(Choice(case.name, None, None))
            continue
        fit, _, best = max(measured, key=lambda m: (m[0], m[1]))
        out.append(Choice(case.name, best.node_id if fit > 1.0 else None, fit))
    return out


def source_literal(source: str) -> str:
    """A Python literal for ``source`` that a person can still read in the exported file."""
    if "'''" not in source and "\r" not in source:
        literal = "r'''" + source + "'''"
        try:
            if ast.literal_eval(literal) == source:
                return literal
        except (SyntaxError, ValueError):
            pass
    return repr(source)  # exact for any content, if unreadable


def render_export(spec_source: str, cases: list[ExportCase], candidates: list[ExportCandidate],
                  job_id: str = "", device: str = "cuda") -> str:
    """The module's source. Only candidates chosen for some case are embedded; they run only
    on ``device`` (where they were verified), the reference everywhere else."""
    if device not in ("cuda", "cpu"):
        raise ValueError(f"export device must be 'cuda' or 'cpu', not {device!r}")
    if not cases:
        raise ValueError("export needs at least one test case (the spec's own shapes)")
    choices = choose_per_case(cases, candidates)
    used = {c.node_id for c in choices if c.node_id}
    code = {c.node_id: c.code for c in candidates if c.node_id in used}
    sizes = {c.name: dict(c.sizes) for c in cases}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                             autoescape=False)
    # The table goes into the module's docstring: keep user-named cases from closing it.
    table = [c.describe().replace("\\", "/").replace('"', "'") for c in choices]
    return env.get_template("export_module.py.j2").render(
        job_id=job_id.replace('"', "'"), table=table, spec_source=source_literal(spec_source), device=device,
        candidates="{\n" + "".join(f"    {n!r}: {source_literal(src)},\n" for n, src in code.items()) + "}",
        cases=repr([(c.case, sizes[c.case], c.node_id) for c in choices]))


@dataclass
class ExportResult:
    source: str                                 # the module to write
    choices: list[Choice]

    @property
    def kernels(self) -> int:
        """Distinct kernels embedded (ExportJobResponse.kernels)."""
        return len({c.node_id for c in self.choices if c.node_id})

    @property
    def fallbacks(self) -> int:
        """Cases served by the PyTorch reference (ExportJobResponse.fallbacks)."""
        return sum(1 for c in self.choices if c.node_id is None)


def build_export(spec_source: str, cases: list[ExportCase], candidates: list[ExportCandidate],
                 job_id: str = "", device: str = "cuda") -> ExportResult:
    source = render_export(spec_source, cases, candidates, job_id, device)
    return ExportResult(source, choose_per_case(cases, candidates))


def cases_from_reports(reports: Sequence[EvaluationReport | Mapping[str, Any]]) -> list[ExportCase]:
    """The cases (name and the sizes actually used) named in evaluation reports, first seen first.

    Reports are the documents at ``EvaluationResult.report_key``; their ``result.cases`` carry
    the sizes the evaluator really ran (screening sizes on the cpu pool, say), which is what
    the exported module must key its dispatch on.
    """
    seen: dict[str, ExportCase] = {}
    for report in map(EvaluationReport.read, reports):
        for case in report.result.cases:
            if case.name and case.name not in seen:
                seen[case.name] = ExportCase(case.name, dict(case.sizes))
    return list(seen.values())


def export_module(path: Path, spec_source: str, cases: list[ExportCase], candidates: list[ExportCandidate],
                  job_id: str = "", device: str = "cuda") -> list[Choice]:
    """Write the module to ``path``; return the per-case choices (for the CLI to print)."""
    path.write_text(render_export(spec_source, cases, candidates, job_id, device))
    return choose_per_case(cases, candidates)
