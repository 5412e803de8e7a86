"""A study run with a crowd (issue 33): criterion labels, attention checks, a crowd platform's link.

- ``study.labels`` (the word a question uses for each criterion), ``study.check_rate`` (the share of each
  annotator's pages that are instructed attention checks), ``study.crowd_key`` (the one public link of a
  study recruited on a crowd platform), ``study.crowd_secret`` (the key of the participants' hashed ids),
  ``study.completion_code`` and ``study.redirect_url`` (shown at the end);
- ``item.check``: an instructed attention check;
- ``annotator.platform_hash``: the keyed hash of the platform id of whoever took the place, unique per study.

Only columns and indexes are added, in place (a new constraint would make SQLite copy the table).

Studies stored before keep their rows: no labels (the criteria's names), no checks, no crowd link.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the columns and the two unique indexes (``op.add_column``, not a batch: a batch copies a table
    whose new column has a server default, and SQLite then drops the old copy, deleting the rows that
    reference it through ON DELETE CASCADE)."""
    op.add_column("study", sa.Column("labels", sa.JSON(), nullable=True))
    op.add_column("study", sa.Column("check_rate", sa.Float(), nullable=False, server_default=sa.text("0")))
    op.add_column("study", sa.Column("crowd_key", sa.String(64), nullable=True))
    op.add_column("study", sa.Column("crowd_secret", sa.String(64), nullable=True))
    op.add_column("study", sa.Column("completion_code", sa.String(100), nullable=True))
    op.add_column("study", sa.Column("redirect_url", sa.Text(), nullable=True))
    op.add_column("item", sa.Column("check", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("annotator", sa.Column("platform_hash", sa.String(64), nullable=True))
    op.create_index("ix_study_crowd_key", "study", ["crowd_key"], unique=True)
    op.create_index("ix_annotator_platform", "annotator", ["study_id", "platform_hash"], unique=True)


def downgrade() -> None:
    """Drop them (SQLite 3.35 and later drop a column in place)."""
    op.drop_index("ix_annotator_platform", "annotator")
    op.drop_index("ix_study_crowd_key", "study")
    op.drop_column("annotator", "platform_hash")
    op.drop_column("item", "check")
    for column in ("redirect_url", "completion_code", "crowd_secret", "crowd_key", "check_rate", "labels"):
        op.drop_column("study", column)
