"""jobs.spec as a serialized KernelSpec; nodes.diagnosis

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 09:00:00

The job's spec settings were a JSON object rebuilt into protobuf messages on every dispatch;
they are now the KernelSpec message itself (less its source), copied into the work messages
as it is. Nodes keep the one-line diagnosis their expansion was written against.
"""
from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from kevolve.v1 import common_pb2, job_pb2

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

_jobs_json = sa.table("jobs", sa.column("id", sa.String), sa.column("spec", sa.JSON))
_jobs_message = sa.table("jobs", sa.column("id", sa.String), sa.column("spec_message", sa.LargeBinary))


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("spec_message", sa.LargeBinary(), nullable=False, server_default=sa.text("''")))
    conn = op.get_bind()
    for job_id, spec in conn.execute(sa.select(_jobs_json.c.id, _jobs_json.c.spec)).all():
        raw = spec if isinstance(spec, dict) else json.loads(spec or "{}")
        message = job_pb2.KernelSpec(
            test_cases=[common_pb2.TestCase(name=c["name"], sizes=c.get("sizes", {})) for c in raw.get("test_cases", [])],
            cpu_sizes=raw.get("cpu_sizes", {}), atol=float(raw.get("atol", 0.0)), rtol=float(raw.get("rtol", 0.0)))
        conn.execute(_jobs_message.update().where(_jobs_message.c.id == job_id)
                     .values(spec_message=message.SerializeToString()))
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("spec")
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("diagnosis", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("diagnosis")
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("spec", sa.JSON(), nullable=False, server_default="{}"))
    conn = op.get_bind()
    for job_id, data in conn.execute(sa.select(_jobs_message.c.id, _jobs_message.c.spec_message)).all():
        message = job_pb2.KernelSpec.FromString(bytes(data or b""))
        raw = {"test_cases": [{"name": c.name, "sizes": dict(c.sizes)} for c in message.test_cases],
               "cpu_sizes": dict(message.cpu_sizes), "atol": message.atol, "rtol": message.rtol}
        conn.execute(_jobs_json.update().where(_jobs_json.c.id == job_id).values(spec=raw))
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("spec_message")
