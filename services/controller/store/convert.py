"""Rows of the metadata store as the protobuf messages the API and the bus carry."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from kevolve.v1 import common_pb2, job_pb2

from .models import JobRow, NodeRow


def config_to_dict(config: job_pb2.JobConfig) -> dict[str, Any]:
    """JobConfig with proto field names and every field present (what policies read)."""
    out = json_format.MessageToDict(config, preserving_proto_field_name=True,
                                    always_print_fields_with_no_presence=True, use_integers_for_enums=True)
    # MessageToDict writes int64 as strings (JSON cannot hold them exactly); ours fit.
    for key in ("seed", "max_tokens"):
        out[key] = int(out.get(key, 0))
    return out


def config_from_dict(data: dict[str, Any]) -> job_pb2.JobConfig:
    known = {f.name for f in job_pb2.JobConfig.DESCRIPTOR.fields}
    return json_format.ParseDict({k: v for k, v in data.items() if k in known}, job_pb2.JobConfig())


def job_to_proto(row: JobRow, with_source: str = "") -> job_pb2.Job:
    spec = row.kernel_spec()
    spec.name, spec.source, spec.source_key = row.spec_name, with_source, row.spec_source_key
    return job_pb2.Job(
        job_id=row.id,
        tenant=row.tenant,
        spec=spec,
        platform=row.platform,
        config=config_from_dict(row.config or {}),
        state=row.state,
        end_reason=row.end_reason,
        best_node_id=row.best_node_id or "",
        best_fitness=row.best_fitness,
        candidates=row.candidates,
        evaluated=row.evaluated,
        passed=row.passed,
        created_at=row.created_at,
        updated_at=row.updated_at,
        usage=common_pb2.Usage(prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens,
                               cost_usd=row.cost_usd),
        fitness_is_speed=row.fitness_is_speed,
        fitness_unit=str((row.config or {}).get("fitness_unit", "")),
    )


def node_to_proto(row: NodeRow) -> job_pb2.Candidate:
    return job_pb2.Candidate(
        node_id=row.id,
        job_id=row.job_id,
        parent_id=row.parent_id or "",
        generation=row.generation,
        status=row.status,
        verdict=row.verdict,
        fitness=row.fitness,
        is_buggy=row.is_buggy,
        code_key=row.code_key,
        eval_report_key=row.eval_report_key,
        screen_report_key=row.screen_report_key,
        profile_report_key=row.profile_report_key,
        prompt_key=row.prompt_key,
        reason=row.reason,
        decided_by=row.decided_by,
        context_mode=row.context_mode,
        policy=row.policy,
        tunables=row.tunables or {},
        usage=common_pb2.Usage(prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens,
                               cost_usd=row.cost_usd, model=row.usage_model),
        retrieved_docs=row.retrieved_docs or [],
        created_at=row.created_at,
        backend=row.backend,
        suspicious=row.suspicious,
        approved=row.approved,
        candidate_ms=row.candidate_ms,
        baseline_ms=row.baseline_ms,
        profile_summary=row.profile_summary,
        case_fitness=row.case_fitness or {},
        diagnosis=row.diagnosis or "",
        reply_key=row.reply_key or "",
        full_report_key=row.full_report_key or "",
    )


def one_line(row: NodeRow) -> str:
    """What an LLM prompt (and a human) needs to know about a node at a glance."""
    verdict = common_pb2.Verdict.Name(row.verdict) if row.verdict else "PENDING"
    parts = [verdict, f"fitness={row.fitness:.3f}"]
    if row.candidate_ms:
        parts.append(f"{row.candidate_ms:.4g} ms vs {row.baseline_ms:.4g} ms")
    if row.decided_by:
        parts.append(f"[{row.decided_by}]")
    if row.reason:
        parts.append(row.reason[:160])
    if row.profile_summary:
        parts.append(f"profile: {row.profile_summary[:120]}")
    if row.reused:
        parts.append("(reused from an earlier job)")
    return " ".join(parts)


def node_summary(row: NodeRow) -> common_pb2.NodeSummary:
    return common_pb2.NodeSummary(
        node_id=row.id,
        parent_id=row.parent_id or "",
        verdict=row.verdict,
        fitness=row.fitness,
        code_key=row.code_key,
        eval_report_key=row.eval_report_key or row.screen_report_key,
        profile_report_key=row.profile_report_key,
        tunables=row.tunables or {},
        summary=one_line(row),
        generation=row.generation,
    )


def artifact_keys(job: JobRow, nodes: list[NodeRow]) -> set[str]:
    """Every object-store key a job references (GetArtifact serves only these)."""
    keys = {job.spec_source_key}
    for n in nodes:
        keys.update((n.code_key, n.eval_report_key, n.screen_report_key, n.profile_report_key, n.prompt_key,
                     n.reply_key, n.full_report_key))
    keys.discard("")
    return keys
