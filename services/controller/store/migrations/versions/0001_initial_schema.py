"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-21 23:31:48.836390
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('jobs',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('tenant', sa.String(length=128), nullable=False),
    sa.Column('spec_name', sa.String(length=256), nullable=False),
    sa.Column('spec_source_key', sa.String(length=256), nullable=False),
    sa.Column('spec_fingerprint', sa.String(length=64), nullable=False),
    sa.Column('spec_sizes', sa.JSON(), nullable=False),
    sa.Column('spec', sa.JSON(), nullable=False),
    sa.Column('platform', sa.String(length=32), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('state', sa.Integer(), nullable=False),
    sa.Column('end_reason', sa.Text(), nullable=False),
    sa.Column('best_node_id', sa.String(length=40), nullable=True),
    sa.Column('best_fitness', sa.Float(), nullable=False),
    sa.Column('candidates', sa.Integer(), nullable=False),
    sa.Column('evaluated', sa.Integer(), nullable=False),
    sa.Column('passed', sa.Integer(), nullable=False),
    sa.Column('since_improvement', sa.Integer(), nullable=False),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('completion_tokens', sa.Integer(), nullable=False),
    sa.Column('cost_usd', sa.Float(), nullable=False),
    sa.Column('policy_state', sa.JSON(), nullable=False),
    sa.Column('decisions', sa.Integer(), nullable=False),
    sa.Column('fitness_is_speed', sa.Boolean(), nullable=False),
    sa.Column('reused_from', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_jobs_spec_fingerprint'), ['spec_fingerprint'], unique=False)
        batch_op.create_index(batch_op.f('ix_jobs_state'), ['state'], unique=False)
        batch_op.create_index(batch_op.f('ix_jobs_tenant'), ['tenant'], unique=False)

    op.create_table('expansions',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('job_id', sa.String(length=40), nullable=False),
    sa.Column('parent_id', sa.String(length=40), nullable=False),
    sa.Column('context_mode', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('decision', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('published', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('job_id', 'decision', name='uq_expansions_job_decision')
    )
    with op.batch_alter_table('expansions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_expansions_job_id'), ['job_id'], unique=False)

    op.create_table('nodes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('job_id', sa.String(length=40), nullable=False),
    sa.Column('expansion_id', sa.String(length=64), nullable=True),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('parent_id', sa.String(length=40), nullable=True),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('status', sa.Integer(), nullable=False),
    sa.Column('verdict', sa.Integer(), nullable=False),
    sa.Column('fitness', sa.Float(), nullable=False),
    sa.Column('is_buggy', sa.Boolean(), nullable=False),
    sa.Column('suspicious', sa.Boolean(), nullable=False),
    sa.Column('approved', sa.Boolean(), nullable=False),
    sa.Column('reused', sa.Boolean(), nullable=False),
    sa.Column('code_key', sa.String(length=256), nullable=False),
    sa.Column('eval_report_key', sa.String(length=256), nullable=False),
    sa.Column('screen_report_key', sa.String(length=256), nullable=False),
    sa.Column('profile_report_key', sa.String(length=256), nullable=False),
    sa.Column('profile_summary', sa.Text(), nullable=False),
    sa.Column('prompt_key', sa.String(length=256), nullable=False),
    sa.Column('retrieved_docs', sa.JSON(), nullable=False),
    sa.Column('tunables', sa.JSON(), nullable=False),
    sa.Column('context_mode', sa.Integer(), nullable=False),
    sa.Column('policy', sa.Integer(), nullable=False),
    sa.Column('backend', sa.String(length=64), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('decided_by', sa.String(length=256), nullable=False),
    sa.Column('usage_model', sa.String(length=128), nullable=False),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('completion_tokens', sa.Integer(), nullable=False),
    sa.Column('cost_usd', sa.Float(), nullable=False),
    sa.Column('generation_s', sa.Float(), nullable=False),
    sa.Column('eval_s', sa.Float(), nullable=False),
    sa.Column('candidate_ms', sa.Float(), nullable=False),
    sa.Column('baseline_ms', sa.Float(), nullable=False),
    sa.Column('case_fitness', sa.JSON(), nullable=False),
    sa.Column('attempt', sa.String(length=128), nullable=False),
    sa.Column('dispatched_attempt', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('expansion_id')
    )
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nodes_job_id'), ['job_id'], unique=False)
        batch_op.create_index('ix_nodes_job_seq', ['job_id', 'seq'], unique=False)
        batch_op.create_index(batch_op.f('ix_nodes_parent_id'), ['parent_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nodes_parent_id'))
        batch_op.drop_index('ix_nodes_job_seq')
        batch_op.drop_index(batch_op.f('ix_nodes_job_id'))

    op.drop_table('nodes')
    with op.batch_alter_table('expansions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_expansions_job_id'))

    op.drop_table('expansions')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_jobs_tenant'))
        batch_op.drop_index(batch_op.f('ix_jobs_state'))
        batch_op.drop_index(batch_op.f('ix_jobs_spec_fingerprint'))

    op.drop_table('jobs')
