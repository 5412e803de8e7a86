"""A Likert study's scale: points and the labels of its two ends (issue 21, Likert rating).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``study.scale`` (JSON, empty for the tasks without a scale)."""
    with op.batch_alter_table("study") as batch:
        batch.add_column(sa.Column("scale", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop ``study.scale``."""
    with op.batch_alter_table("study") as batch:
        batch.drop_column("scale")
