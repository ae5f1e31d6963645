"""Seeding a new job from an earlier one with the same reference computation.

Two specs match when their normalized source (``specprobe.fingerprint``: no docstrings or
comments, sizes abstracted) is equal, the platform is the same and every size is within
``factor`` of the earlier one. The earlier job's best kernels then reach the new job's
prompts as elites. Only the tenant's own jobs are considered: kernels never leak across.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from kevolve.v1 import job_pb2
from services.controller.store.models import JobRow


def sizes_near(a: dict[str, int], b: dict[str, int], factor: float) -> bool:
    if set(a) != set(b):
        return False
    for key, value in a.items():
        other = b[key]
        if value <= 0 or other <= 0:
            if value != other:
                return False
            continue
        if max(value, other) / min(value, other) > factor:
            return False
    return True


def find_reusable(session: Session, *, tenant: str, fingerprint: str, platform: str, sizes: dict[str, int],
                  factor: float) -> str:
    """Id of the most recent matching job with a passing best kernel, or ""."""
    rows = session.scalars(
        select(JobRow).where(JobRow.tenant == tenant, JobRow.spec_fingerprint == fingerprint,
                             JobRow.platform == platform, JobRow.best_node_id.is_not(None),
                             JobRow.state.in_((job_pb2.SUCCEEDED, job_pb2.RUNNING, job_pb2.CANCELLED)))
        .order_by(JobRow.created_at.desc()).limit(20)
    ).all()
    for row in rows:
        if sizes_near(sizes, {k: int(v) for k, v in (row.spec_sizes or {}).items()}, factor):
            return row.id
    return ""
