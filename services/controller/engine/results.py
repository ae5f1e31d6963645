"""Folding results into the graph: a new node per returned expansion, a verdict per evaluation.

Both run inside the engine's transaction, so the node, the job's counters and the policy's
state change together or not at all.
"""

from __future__ import annotations

import statistics
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from kevolve.platforms import Platform
from kevolve.v1 import common_pb2, evaluation_pb2, job_pb2, work_pb2
from services.controller import metrics
from services.controller.store.models import ExpansionRow, JobRow, NodeRow

from .dispatch import CONFIRM, FULL, PROFILE, SCREEN, attempt_token, parse_attempt
from .job_runtime import JobRuntime, to_graph_node

MAX_INFRA_ATTEMPTS = 2   # an evaluator failure (not the candidate's) is retried once


def new_node(s: Session, job: JobRow, msg: work_pb2.CandidateGenerated, rt: JobRuntime | None,
             platform: Platform) -> NodeRow:
    """The node for a returned expansion: NO_CODE at once, else waiting for its first evaluation."""
    exp = s.get(ExpansionRow, msg.expansion_id) if msg.expansion_id else None
    if exp is not None:
        exp.status = "returned"
        node_id = exp.id.replace("-x", "-n", 1)
    else:
        node_id = f"{job.id}-u{uuid.uuid4().hex[:8]}"
    parent_id = (exp.parent_id if exp is not None else msg.parent_id) or None
    if parent_id and s.get(NodeRow, parent_id) is None:
        parent_id = None   # a parent from elsewhere (another job) is not part of this graph
    usage = msg.usage
    node = NodeRow(
        id=node_id, job_id=job.id, expansion_id=msg.expansion_id or None, seq=job.candidates,
        parent_id=parent_id, generation=msg.generation or (exp.generation if exp else 0),
        status=job_pb2.GENERATED, code_key=msg.code_key, prompt_key=msg.prompt_key,
        retrieved_docs=list(msg.retrieved_docs), tunables=dict(msg.tunables),
        context_mode=msg.context_mode or (exp.context_mode if exp else 0),
        policy=int(job.config.get("policy", 0)), backend=msg.backend, usage_model=usage.model,
        prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens, cost_usd=usage.cost_usd,
        generation_s=msg.generation_s, diagnosis=diagnosis_line(msg.diagnosis), reply_key=msg.reply_key,
    )
    job.candidates += 1
    job.prompt_tokens += usage.prompt_tokens
    job.completion_tokens += usage.completion_tokens
    job.cost_usd += usage.cost_usd
    if msg.error or not msg.code_key:
        node.status, node.verdict = job_pb2.DONE, common_pb2.NO_CODE
        node.reason = msg.error or "generator returned no code key"
        node.decided_by = "generator:" + (msg.error.split(":")[0][:60] if msg.error else "no_code")
        node.is_buggy = True
        job.evaluated += 1
        job.since_improvement += 1
        metrics.CANDIDATES.labels(job.platform, "NO_CODE").inc()
    elif job.state != job_pb2.RUNNING:
        node.status = job_pb2.DONE
        node.reason = f"arrived after the job ended ({job.end_reason}); not evaluated"
    elif (twin := _judged_twin(s, job, msg.code_key)) is not None:
        _copy_verdict(job, node, twin)
    else:
        screen = bool(platform.screen_on) and not job.config.get("skip_screening")
        node.status = job_pb2.SCREENING if screen else job_pb2.EVALUATING
        node.attempt = attempt_token(node_id, SCREEN if screen else FULL, 1)
    s.add(node)
    s.flush()
    if rt is not None:
        rt.state.nodes[node.id] = to_graph_node(node, node.status == job_pb2.DONE and bool(node.verdict))
        if node.status in (job_pb2.SCREENING, job_pb2.EVALUATING):
            rt.judging.add(node.id)
        if node.status == job_pb2.DONE and node.verdict:
            rt.policy.observe(rt.state, rt.state.nodes[node.id])
            job.policy_state = dict(rt.state.policy_state)
    return node


def diagnosis_line(diagnosis: work_pb2.Diagnosis) -> str:
    """The retriever's diagnosis in one line: category, the pattern or bottleneck, the evidence."""
    if not diagnosis.category:
        return ""
    detail = diagnosis.compile_error_class or diagnosis.correctness_pattern or diagnosis.bottleneck
    head = f"{diagnosis.category} ({detail})" if detail else diagnosis.category
    return (f"{head}: {diagnosis.evidence}" if diagnosis.evidence else head)[:2000]


def _judged_twin(s: Session, job: JobRow, code_key: str) -> NodeRow | None:
    """An earlier node of this job with byte-identical code and a final verdict, if any.

    Code keys are content hashes, so equal keys mean equal code: evaluating it again would
    spend an evaluator (a GPU, for cuda jobs) to learn what the job already knows.
    """
    if not code_key:
        return None
    final = (job_pb2.DONE, job_pb2.PROFILING)
    return s.scalars(select(NodeRow).where(
        NodeRow.job_id == job.id, NodeRow.code_key == code_key, NodeRow.status.in_(final),
        NodeRow.verdict.notin_((0, common_pb2.INFRA_ERROR))).order_by(NodeRow.seq)).first()


def _copy_verdict(job: JobRow, node: NodeRow, twin: NodeRow) -> None:
    for name in ("verdict", "fitness", "is_buggy", "suspicious", "case_fitness", "eval_report_key",
                 "screen_report_key", "profile_report_key", "profile_summary", "candidate_ms", "baseline_ms"):
        setattr(node, name, getattr(twin, name))
    node.status = job_pb2.DONE
    node.decided_by = f"dedupe:{twin.id}"
    node.reason = f"same code as {twin.id} (equal content hash); its verdict is reused, not re-evaluated"
    job.evaluated += 1
    job.passed += node.verdict == common_pb2.PASSED
    job.since_improvement += 1   # an identical kernel cannot improve on its twin
    metrics.CANDIDATES.labels(job.platform, common_pb2.Verdict.Name(node.verdict)).inc()


def _wants_profile(verdict: int, improved: bool, policy: str) -> bool:
    """Whether a judged node goes to the profiler.

    "improvements" (the default): a pass that became the job's best, and every SUSPICIOUS
    node (a reviewer wants its profile). A GPU profile holds the GPU as timing does, so
    profiling every pass would halve a one-GPU pool's search rate, while the expansions that
    read a profile's diagnosis mostly start from the best node. "all": every pass; "none": off.
    """
    if policy == "none" or verdict not in (common_pb2.PASSED, common_pb2.SUSPICIOUS):
        return False
    return policy == "all" or verdict == common_pb2.SUSPICIOUS or improved


# A job's timing noise is measured once it has this many confirmed pairs (full-stage run and
# confirmation); a larger gain than the cap is always timed again, however noisy the job.
MIN_NOISE_PAIRS = 3
MAX_NOISE_MARGIN = 0.25


def timing_noise(s: Session, job: JobRow) -> float:
    """The job's run-to-run timing noise: the median relative difference between the two
    measurements of its confirmed nodes (0 until it has MIN_NOISE_PAIRS, at most MAX_NOISE_MARGIN)."""
    rows = s.execute(select(NodeRow.first_fitness, NodeRow.fitness).where(
        NodeRow.job_id == job.id, NodeRow.first_fitness > 0, NodeRow.fitness > 0,
        NodeRow.verdict == common_pb2.PASSED)).all()
    if len(rows) < MIN_NOISE_PAIRS:
        return 0.0
    return min(MAX_NOISE_MARGIN, statistics.median(abs(first / second - 1) for first, second in rows))


def _would_be_best(job: JobRow, msg: evaluation_pb2.EvaluationResult, stage: str, confirm: bool) -> bool:
    """A full-stage pass that beats the job's best, on a job whose bests are timed twice."""
    return (confirm and stage == FULL and job.fitness_is_speed and job.state == job_pb2.RUNNING
            and msg.verdict == common_pb2.PASSED and msg.fitness > job.best_fitness)


def _confirmation(job: JobRow, msg: evaluation_pb2.EvaluationResult, noise: float) -> bool:
    """Whether a would-be best must be timed once more before it may become the best.

    The best of N noisy measurements is biased upward (a candidate timed while something
    slowed its baseline looks faster than it is): a pass that would beat the job's best is
    evaluated again, and the node takes the second run's verdict, fitness and report, which
    were not selected for being high. A kernel that fails on the second run fails.

    A gain within the job's own timing noise is not: one more measurement as noisy as the
    first cannot tell it from chance, and on a landscape where many kernels are about equal
    (a bandwidth-bound operator) every other candidate would be timed twice (an H100 search of
    a 16-bit RMSNorm confirmed 48 of 158 candidates, a quarter of its GPU time). Such a pass
    keeps its fitness and is not made the best.
    """
    return msg.fitness > job.best_fitness * (1.0 + noise)


def apply_result(s: Session, job: JobRow, node: NodeRow, msg: evaluation_pb2.EvaluationResult,
                 rt: JobRuntime | None, profile_policy: str = "improvements", confirm: bool = False) -> bool:
    """Fold an (already fenced) evaluation result into the node and the job; True if a new best.

    ``confirm``: the platform measures speed, so a would-be new best is timed twice."""
    stage, n = parse_attempt(node.attempt)
    verdict = msg.verdict or common_pb2.INFRA_ERROR
    first_fitness = node.fitness
    if stage == SCREEN:
        node.screen_report_key = msg.report_key
    else:
        node.eval_report_key = msg.report_key
    node.decided_by, node.eval_s = msg.decided_by, node.eval_s + msg.duration_s
    if verdict == common_pb2.INFRA_ERROR and n < MAX_INFRA_ATTEMPTS and job.state == job_pb2.RUNNING:
        node.attempt = attempt_token(node.id, stage, n + 1)
        node.reason = f"{stage} attempt {n}: evaluator failed ({msg.reason[:200]}); retrying"
        return False
    if stage == SCREEN and verdict == common_pb2.PASSED:
        node.reason = f"screen passed on {msg.platform}"
        if job.state == job_pb2.RUNNING:
            node.status = job_pb2.EVALUATING
            node.attempt = attempt_token(node.id, FULL, 1)
        else:
            node.status = job_pb2.DONE
            node.reason += f"; job ended ({job.end_reason}) before the full evaluation"
        return False
    within_noise = 0.0   # the job's noise when this pass beat its best by less than that
    if _would_be_best(job, msg, stage, confirm):
        noise = timing_noise(s, job)
        if _confirmation(job, msg, noise):
            node.fitness = node.first_fitness = msg.fitness   # held until the confirmation comes back
            node.full_report_key = msg.report_key   # the confirmation's report takes eval_report_key
            node.status = job_pb2.EVALUATING
            node.attempt = attempt_token(node.id, CONFIRM, 1)
            node.reason = f"passed; {msg.fitness:.3g}x would be a new best: timing it again to confirm"
            return False
        within_noise = noise
    # A final verdict.
    node.verdict = verdict
    node.reason = {SCREEN: f"screen on {msg.platform}: ",
                   CONFIRM: f"confirmation run (the first measured {first_fitness:.3g}x): "}.get(stage, "") + msg.reason
    if within_noise:
        node.reason = (f"passed; {msg.fitness:.3g}x is within the job's timing noise ({within_noise:.1%}) of its "
                       f"best {job.best_fitness:.3g}x: not timed again, not taken as the best. " + msg.reason)
    node.is_buggy = verdict not in (common_pb2.PASSED, common_pb2.SUSPICIOUS, common_pb2.INFRA_ERROR)
    node.suspicious = verdict == common_pb2.SUSPICIOUS
    fitness = (msg.fitness if job.fitness_is_speed else 1.0) if verdict == common_pb2.PASSED else 0.0
    node.fitness = msg.fitness if verdict == common_pb2.SUSPICIOUS else fitness
    node.case_fitness = {c.name: c.fitness for c in msg.cases}
    cand = [c.candidate_ms for c in msg.cases if c.candidate_ms > 0]
    base = [c.compile_ms or c.eager_ms for c in msg.cases if (c.compile_ms or c.eager_ms) > 0]
    node.candidate_ms = statistics.median(cand) if cand else 0.0
    node.baseline_ms = statistics.median(base) if base else 0.0
    job.evaluated += 1
    metrics.CANDIDATES.labels(job.platform, common_pb2.Verdict.Name(verdict)).inc()
    improved = False
    if verdict == common_pb2.PASSED:
        job.passed += 1
        if fitness > job.best_fitness and not within_noise:
            job.best_fitness, job.best_node_id, improved = fitness, node.id, True
            metrics.BEST_FITNESS.labels(job.id).set(fitness)
        if job.state == job_pb2.FAILED:
            job.state = job_pb2.SUCCEEDED   # a late pass of an ended job still counts
    if _wants_profile(verdict, improved, profile_policy):
        node.status = job_pb2.PROFILING
        node.attempt = attempt_token(node.id, PROFILE, 1)
    else:
        node.status = job_pb2.DONE
    job.since_improvement = 0 if improved else job.since_improvement + 1
    if rt is not None:
        rt.judging.discard(node.id)
        graph_node = to_graph_node(node, True)
        rt.state.nodes[node.id] = graph_node
        rt.policy.observe(rt.state, graph_node)
        job.policy_state = dict(rt.state.policy_state)
    return improved
