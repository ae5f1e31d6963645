"""nodes.reply_key

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27 01:00:00

Each node keeps the object key of the LLM reply its code was taken from, so a user can read
what the model answered (a reply without usable code included).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("reply_key", sa.String(256), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("reply_key")
