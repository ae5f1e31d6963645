"""What a finished (or running) job produces for its user: the export module and the report.

Both are built from the metadata store plus the objects its rows point at; the heavy lifting
(choosing per-shape winners, drawing the tree) lives in export.py and report.py.
"""

from __future__ import annotations

from kevolve.objstore import ObjectNotFound, ObjectStore
from kevolve.reports import EvaluationReport
from kevolve.v1 import common_pb2, job_pb2
from services.controller.store.models import JobRow, NodeRow

from .export import ExportCandidate, ExportResult, build_export, cases_from_reports
from .report import CaseSpeedup, ReportData, ReportNode, path_to, render_report


def _eligible(node: NodeRow) -> bool:
    """Verified kernels only; a suspicious one only once a user approved it."""
    if node.verdict == common_pb2.PASSED:
        return True
    return node.verdict == common_pb2.SUSPICIOUS and node.approved


def _report(store: ObjectStore, key: str) -> EvaluationReport | None:
    if not key:
        return None
    try:
        return EvaluationReport.read(store.get(key))
    except ObjectNotFound:
        return None


def export_job(job: JobRow, nodes: list[NodeRow], store: ObjectStore, device: str = "cuda") -> ExportResult:
    """``device``: where the job's kernels were verified ("cuda", or "cpu" for kernels checked
    under Triton's interpreter); the export runs them there only."""
    passing = [n for n in nodes if _eligible(n) and n.code_key]
    # Highest fitness first so ties between equal kernels go to the better-ranked node.
    passing.sort(key=lambda n: (-n.fitness, n.seq))
    reports = [r for r in (_report(store, n.eval_report_key) for n in passing) if r]
    cases = cases_from_reports(reports)
    candidates = [
        ExportCandidate(node_id=n.id, code=store.get(n.code_key).decode("utf-8", "replace"),
                        case_fitness=dict(n.case_fitness or {}), passed=True)
        for n in passing
    ]
    spec_source = store.get(job.spec_source_key).decode("utf-8", "replace")
    return build_export(spec_source, cases, candidates, job_id=job.id, device=device)


def report_job(job: JobRow, nodes: list[NodeRow], store: ObjectStore) -> str:
    report_nodes = [ReportNode(node_id=n.id, parent_id=n.parent_id or "", verdict=n.verdict, fitness=n.fitness,
                               created_at=n.created_at, summary=(n.reason or "")[:200], model=n.usage_model or "",
                               tokens=(n.prompt_tokens or 0) + (n.completion_tokens or 0)) for n in nodes]
    best = next((n for n in nodes if n.id == job.best_node_id), None)
    cases = []
    if best is not None:
        for name, fitness in sorted((best.case_fitness or {}).items()):
            cases.append(CaseSpeedup(case=name, speedup=fitness, node_id=best.id))
    best_code = store.get(best.code_key).decode("utf-8", "replace") if best is not None and best.code_key else ""
    policy = job_pb2.SelectionPolicy.Name(int((job.config or {}).get("policy", 0) or 0))
    data = ReportData(job_id=job.id, spec_name=job.spec_name, platform=job.platform, policy=policy,
                      end_reason=job.end_reason or "", created_at=job.created_at, nodes=report_nodes,
                      best_path=path_to(report_nodes, job.best_node_id) if job.best_node_id else [],
                      cases=cases, best_code=best_code, prompt_tokens=job.prompt_tokens or 0,
                      completion_tokens=job.completion_tokens or 0, cost_usd=job.cost_usd or 0.0)
    return render_report(data)
