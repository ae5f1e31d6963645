"""nodes.first_fitness

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27 14:30:00

A confirmed node keeps the fitness of its full-stage run beside its confirmation's: the job's
pairs measure its timing noise, within which a would-be best is not timed again.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("first_fitness", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("first_fitness")
