"""Reviews: judgements of recorded steps by people or programs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("step_id", sa.String(64), nullable=False),
        sa.Column("trajectory_id", sa.String(255), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(255), nullable=False),
        sa.Column("reviewer_kind", sa.String(16), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("edited", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reviews"),
    )
    op.create_index("ix_reviews_step_id", "reviews", ["step_id"])
    op.create_index("ix_reviews_trajectory_id", "reviews", ["trajectory_id"])
    op.create_index("ix_reviews_label", "reviews", ["label"])
    op.create_index("ix_reviews_created_at", "reviews", ["created_at"])


def downgrade() -> None:
    op.drop_table("reviews")
