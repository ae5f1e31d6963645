"""nodes.full_report_key

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27 10:00:00

A node timed again to confirm a would-be best keeps the report of its first (full-stage) run
beside the confirmation's, so what each evaluation cost stays readable.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("full_report_key", sa.String(256), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("full_report_key")
