"""The study tables: study, item, annotator, assignment, answer (issue 21).

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the five tables with their keys and unique constraints."""
    op.create_table(
        "study",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("task", sa.String(20), nullable=False),
        sa.Column("criteria", sa.JSON(), nullable=False),
        sa.Column("per_item", sa.Integer(), nullable=False),
        sa.Column("gold_rate", sa.Float(), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("example", sa.Text(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "item",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("study.id", ondelete="CASCADE"), nullable=False),
        sa.Column("prompt_id", sa.String(1000), nullable=False),
        sa.Column("systems_key", sa.Text(), nullable=False),
        sa.Column("prompt_text", sa.Text(), nullable=False),
        sa.Column("responses", sa.JSON(), nullable=False),
        sa.Column("gold", sa.JSON(), nullable=True),
        sa.UniqueConstraint("study_id", "prompt_id", "systems_key"),
    )
    op.create_index("ix_item_study_id", "item", ["study_id"])
    op.create_table(
        "annotator",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("study.id", ondelete="CASCADE"), nullable=False),
        sa.Column("label", sa.String(100), nullable=False),
        sa.Column("token", sa.String(64), nullable=False, unique=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.UniqueConstraint("study_id", "label"),
    )
    op.create_index("ix_annotator_study_id", "annotator", ["study_id"])
    op.create_table(
        "assignment",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("annotator_id", sa.Integer(), sa.ForeignKey("annotator.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("item.id", ondelete="CASCADE"), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("shown_order", sa.JSON(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("annotator_id", "item_id"),
        sa.UniqueConstraint("annotator_id", "page"),
    )
    op.create_index("ix_assignment_annotator_id", "assignment", ["annotator_id"])
    op.create_index("ix_assignment_item_id", "assignment", ["item_id"])
    op.create_table(
        "answer",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("assignment_id", sa.Integer(), sa.ForeignKey("assignment.id", ondelete="CASCADE"), nullable=False),
        sa.Column("choices", sa.JSON(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_answer_assignment_id", "answer", ["assignment_id"], unique=True)


def downgrade() -> None:
    """Drop the five tables."""
    for table in ("answer", "assignment", "annotator", "item", "study"):
        op.drop_table(table)
