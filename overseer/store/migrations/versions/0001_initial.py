"""The first schema: trajectories, steps and their scores.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trajectories",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("task", sa.Text(), nullable=True),
        sa.Column("agent", sa.String(255), nullable=True),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("policy", sa.String(255), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("n_steps", sa.Integer(), nullable=True),
        sa.Column("n_blocked", sa.Integer(), nullable=True),
        sa.Column("n_flagged", sa.Integer(), nullable=True),
        sa.Column("n_escalated", sa.Integer(), nullable=True),
        sa.Column("trace_id", sa.String(32), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_trajectories"),
    )
    op.create_index("ix_trajectories_agent", "trajectories", ["agent"])
    op.create_index("ix_trajectories_started_at", "trajectories", ["started_at"])
    op.create_table(
        "steps",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("trajectory_id", sa.String(255), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("tool", sa.String(255), nullable=True),
        sa.Column("call_id", sa.String(255), nullable=True),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("rule", sa.String(255), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("policy", sa.String(255), nullable=False),
        sa.Column("scorer", sa.String(512), nullable=False),
        sa.Column("halt", sa.Boolean(), nullable=False),
        sa.Column("agent", sa.String(255), nullable=True),
        sa.Column("step", sa.JSON(), nullable=False),
        sa.Column("errors", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("trace_id", sa.String(32), nullable=True),
        sa.Column("span_id", sa.String(16), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_steps"),
    )
    op.create_index("ix_steps_tool", "steps", ["tool"])
    op.create_index("ix_steps_action", "steps", ["action"])
    op.create_index("ix_steps_rule", "steps", ["rule"])
    op.create_index("ix_steps_agent", "steps", ["agent"])
    op.create_index("ix_steps_created_at", "steps", ["created_at"])
    op.create_index("ix_steps_trajectory_id_idx", "steps", ["trajectory_id", "idx"])
    op.create_table(
        "scores",
        sa.Column("step_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("label", sa.String(255), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("scorer", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("step_id", "name", name="pk_scores"),
    )


def downgrade() -> None:
    op.drop_table("scores")
    op.drop_table("steps")
    op.drop_table("trajectories")
