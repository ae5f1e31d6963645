"""Building the work messages the controller publishes, from rows of the metadata store.

Every message id is deterministic (the expansion id, the node's attempt token), so a
publish repeated after a crash is de-duplicated by JetStream, and a duplicate that slips
past the de-dup window is absorbed by the fencing on the way back.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from kevolve import subjects
from kevolve.platforms import Platform
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, profile_pb2, work_pb2
from services.controller.store import db
from services.controller.store.convert import node_summary
from services.controller.store.models import ExpansionRow, JobRow, NodeRow

SCREEN, FULL, CONFIRM, PROFILE = "screen", "full", "confirm", "profile"


def attempt_token(node_id: str, stage: str, n: int) -> str:
    return f"{node_id}.{stage}.{n}"


def parse_attempt(token: str) -> tuple[str, int]:
    """(stage, number) of an attempt token."""
    _, stage, n = token.rsplit(".", 2)
    return stage, int(n)


def derived_seed(seed: int, decision: int, what: str) -> int:
    digest = hashlib.sha256(f"{seed}:{decision}:{what}".encode()).hexdigest()
    return int(digest[:15], 16)


def elites(session: Session, job: JobRow, limit: int) -> list[common_pb2.NodeSummary]:
    """The job's best passing nodes; topped up from the reused earlier job, if any."""
    out: list[common_pb2.NodeSummary] = []
    for job_id, prefix in ((job.id, ""), (job.reused_from, f"reused from job {job.reused_from}: ")):
        if not job_id or len(out) >= limit:
            continue
        rows = session.scalars(
            select(NodeRow).where(NodeRow.job_id == job_id, NodeRow.fitness > 0,
                                  or_(NodeRow.verdict == common_pb2.PASSED,
                                      and_(NodeRow.verdict == common_pb2.SUSPICIOUS, NodeRow.approved)))
            .order_by(NodeRow.fitness.desc(), NodeRow.seq).limit(limit - len(out))
        ).all()
        for row in rows:
            summary = node_summary(row)
            summary.summary = prefix + summary.summary
            out.append(summary)
    return out


# Enough for a search of thousands of candidates (a key is ~75 bytes: 2048 keys ~150 KB, under
# NATS's 1 MB message limit); older code beyond it may be proposed again, and the controller's
# own de-duplication still keeps it from a second evaluation.
MAX_TRIED_CODE_KEYS = 2048


def tried_code_keys(session: Session, job_id: str, limit: int = MAX_TRIED_CODE_KEYS) -> list[str]:
    """The distinct code keys of a job's candidates, most recent first."""
    last = func.max(NodeRow.seq)
    rows = session.execute(
        select(NodeRow.code_key, last).where(NodeRow.job_id == job_id, NodeRow.code_key != "")
        .group_by(NodeRow.code_key).order_by(last.desc()).limit(limit)
    ).all()
    return [row[0] for row in rows]


def expand_request(session: Session, job: JobRow, exp: ExpansionRow, *, n_ancestors: int, n_siblings: int,
                   n_elites: int) -> work_pb2.ExpandRequest:
    req = work_pb2.ExpandRequest(
        job_id=job.id, expansion_id=exp.id, platform=job.platform, spec_name=job.spec_name,
        spec_key=job.spec_source_key, context_mode=exp.context_mode, generation=exp.generation,
        seed=derived_seed(int(job.config.get("seed", 0)), exp.decision, "expand"), model=exp.model,
        tenant=job.tenant, cpu_sizes=job.kernel_spec().cpu_sizes, allow_tf32=bool(job.config.get("allow_tf32")),
    )
    if exp.parent_id:
        chain = db.lineage(session, exp.parent_id)
        if chain:
            req.parent.CopyFrom(node_summary(chain[0]))
            req.ancestors.extend(node_summary(n) for n in chain[1:1 + n_ancestors])
        siblings = session.scalars(
            select(NodeRow).where(NodeRow.job_id == job.id, NodeRow.parent_id == exp.parent_id)
            .order_by(NodeRow.seq.desc()).limit(n_siblings)
        ).all()
        req.siblings.extend(node_summary(n) for n in siblings)
    req.elites.extend(elites(session, job, n_elites))
    req.tried_code_keys.extend(tried_code_keys(session, job.id))
    req.pending_siblings = session.scalar(
        select(func.count()).select_from(ExpansionRow).where(
            ExpansionRow.job_id == job.id, ExpansionRow.parent_id == exp.parent_id,
            ExpansionRow.status == "issued", ExpansionRow.decision < exp.decision)) or 0
    return req


def eval_seed(job: JobRow) -> int:
    """The seed of every evaluation of a job: one per job, so the evaluator's cached reference
    run (inputs and expected outputs at production sizes, 10-30 s on a GPU) serves all of the
    job's candidates instead of being recomputed for each.

    Candidates never see expected outputs, each run still checks 5 trials and 2 re-checks on
    distinct inputs, and a job without a seed of its own gets inputs no other job shares
    (the seed then comes from its random id). A seeded job is reproducible, inputs included."""
    seed = int(job.config.get("seed", 0))
    return derived_seed(seed, 0, "eval" if seed else f"eval:{job.id}") | 1


def eval_target(job: JobRow, node: NodeRow, platform: Platform) -> tuple[str, evaluation_pb2.EvaluationRequest]:
    """Subject and request for the stage the node's current attempt names."""
    stage, _ = parse_attempt(node.attempt)
    pool = platform.screen_on if stage == SCREEN else job.platform
    spec = job.kernel_spec()
    req = evaluation_pb2.EvaluationRequest(
        job_id=job.id, node_id=node.id, platform=pool, stage=stage, spec_key=job.spec_source_key,
        candidate_key=node.code_key, test_cases=spec.test_cases, cpu_sizes=spec.cpu_sizes, atol=spec.atol,
        rtol=spec.rtol, seed=eval_seed(job),
        attempt=node.attempt,
        tenant=job.tenant,
        cuda_graphs=bool(job.config.get("cuda_graphs")),
        allow_tf32=bool(job.config.get("allow_tf32")),
    )
    return subjects.eval_subject(pool), req


def profile_target(job: JobRow, node: NodeRow) -> tuple[str, profile_pb2.ProfileRequest]:
    req = profile_pb2.ProfileRequest(job_id=job.id, node_id=node.id, platform=job.platform,
                                     spec_key=job.spec_source_key, candidate_key=node.code_key,
                                     eval_report_key=node.eval_report_key, tenant=job.tenant)
    return subjects.profile_subject(job.platform), req


def pending_stage(node: NodeRow) -> str | None:
    """The stage whose request still has to be published for this node, if any."""
    if node.attempt and node.dispatched_attempt != node.attempt and node.status in (
            job_pb2.SCREENING, job_pb2.EVALUATING, job_pb2.PROFILING):
        return parse_attempt(node.attempt)[0]
    return None
