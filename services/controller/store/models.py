"""The metadata store's tables (SQLAlchemy 2 typed models).

The controller is the only writer. Enum columns hold the protobuf enum values (ints) so
the DB and the wire agree without a mapping table. Alembic migrations in ``migrations/``
create and upgrade this schema; ``Base.metadata`` is what they are checked against.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from kevolve.v1 import job_pb2


def now() -> float:
    return time.time()


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[str]: JSON, dict[str, float]: JSON, dict[str, str]: JSON}


class JobRow(Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    tenant: Mapped[str] = mapped_column(String(128), index=True)
    spec_name: Mapped[str] = mapped_column(String(256))
    spec_source_key: Mapped[str] = mapped_column(String(256))
    # Normalized reference (ast without docstrings, sizes abstracted): finds reusable jobs.
    spec_fingerprint: Mapped[str] = mapped_column(String(64), index=True)
    spec_sizes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # The submitted KernelSpec less its source (test cases, cpu sizes, atol, rtol; the spec's own
    # cpu_shapes and tolerances filled in), serialized: work messages copy from it as it is.
    spec_message: Mapped[bytes] = mapped_column(LargeBinary, default=b"")
    platform: Mapped[str] = mapped_column(String(32))
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)      # JobConfig (proto field names)
    state: Mapped[int] = mapped_column(Integer, index=True)
    end_reason: Mapped[str] = mapped_column(Text, default="")
    best_node_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    best_fitness: Mapped[float] = mapped_column(Float, default=0.0)
    candidates: Mapped[int] = mapped_column(Integer, default=0)
    evaluated: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    since_improvement: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    policy_state: Mapped[dict[str, Any]] = mapped_column(default=dict)
    decisions: Mapped[int] = mapped_column(Integer, default=0)
    fitness_is_speed: Mapped[bool] = mapped_column(Boolean, default=True)
    reused_from: Mapped[str] = mapped_column(String(40), default="")
    created_at: Mapped[float] = mapped_column(Float, default=now)
    updated_at: Mapped[float] = mapped_column(Float, default=now, onupdate=now)

    def kernel_spec(self) -> job_pb2.KernelSpec:
        """The job's spec as submitted and completed (no source: that is at ``spec_source_key``)."""
        return job_pb2.KernelSpec.FromString(self.spec_message or b"")


class NodeRow(Base):
    __tablename__ = "nodes"
    __table_args__ = (Index("ix_nodes_job_seq", "job_id", "seq"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    # One node per expansion: a redelivered CandidateGenerated finds its node instead of adding one.
    expansion_id: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    seq: Mapped[int] = mapped_column(Integer)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("nodes.id"), nullable=True, index=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[int] = mapped_column(Integer)
    verdict: Mapped[int] = mapped_column(Integer, default=0)
    fitness: Mapped[float] = mapped_column(Float, default=0.0)
    is_buggy: Mapped[bool] = mapped_column(Boolean, default=False)
    suspicious: Mapped[bool] = mapped_column(Boolean, default=False)
    approved: Mapped[bool] = mapped_column(Boolean, default=False)
    reused: Mapped[bool] = mapped_column(Boolean, default=False)
    code_key: Mapped[str] = mapped_column(String(256), default="")
    eval_report_key: Mapped[str] = mapped_column(String(256), default="")
    screen_report_key: Mapped[str] = mapped_column(String(256), default="")
    profile_report_key: Mapped[str] = mapped_column(String(256), default="")
    profile_summary: Mapped[str] = mapped_column(Text, default="")
    prompt_key: Mapped[str] = mapped_column(String(256), default="")
    diagnosis: Mapped[str] = mapped_column(Text, default="")   # what its expansion was asked to fix
    reply_key: Mapped[str] = mapped_column(String(256), default="")   # the LLM's raw reply
    # The full-stage report a confirmation run replaced as eval_report_key (its work still counts).
    full_report_key: Mapped[str] = mapped_column(String(256), default="")
    # A confirmed node's full-stage fitness, which its confirmation's replaced: the pairs give
    # the job's own run-to-run timing noise.
    first_fitness: Mapped[float] = mapped_column(Float, default=0.0)
    retrieved_docs: Mapped[list[str]] = mapped_column(default=list)
    tunables: Mapped[dict[str, str]] = mapped_column(default=dict)
    context_mode: Mapped[int] = mapped_column(Integer, default=0)
    policy: Mapped[int] = mapped_column(Integer, default=0)
    backend: Mapped[str] = mapped_column(String(64), default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    decided_by: Mapped[str] = mapped_column(String(256), default="")
    usage_model: Mapped[str] = mapped_column(String(128), default="")
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    generation_s: Mapped[float] = mapped_column(Float, default=0.0)
    eval_s: Mapped[float] = mapped_column(Float, default=0.0)
    candidate_ms: Mapped[float] = mapped_column(Float, default=0.0)
    baseline_ms: Mapped[float] = mapped_column(Float, default=0.0)
    case_fitness: Mapped[dict[str, float]] = mapped_column(default=dict)
    # Fencing: a result is applied only when it carries the token of the request the node
    # currently waits for; dispatched_attempt records that request was published.
    attempt: Mapped[str] = mapped_column(String(128), default="")
    dispatched_attempt: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[float] = mapped_column(Float, default=now)
    updated_at: Mapped[float] = mapped_column(Float, default=now, onupdate=now)


class ExpansionRow(Base):
    __tablename__ = "expansions"
    __table_args__ = (UniqueConstraint("job_id", "decision", name="uq_expansions_job_decision"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    parent_id: Mapped[str] = mapped_column(String(40), default="")
    context_mode: Mapped[int] = mapped_column(Integer, default=0)
    model: Mapped[str] = mapped_column(String(128), default="")
    generation: Mapped[int] = mapped_column(Integer, default=0)
    decision: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="issued")   # issued | returned
    # False until the ExpandRequest reached JetStream: a restart re-publishes only these.
    published: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[float] = mapped_column(Float, default=now)
