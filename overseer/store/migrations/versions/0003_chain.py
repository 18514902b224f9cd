"""Tamper evidence: the hash chain of steps and reviews.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("steps", "reviews"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("prev_hash", sa.String(64), nullable=True))
            batch.add_column(sa.Column("hash", sa.String(64), nullable=True))


def downgrade() -> None:
    for table in ("steps", "reviews"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("hash")
            batch.drop_column("prev_hash")
