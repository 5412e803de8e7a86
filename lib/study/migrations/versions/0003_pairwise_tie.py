"""A pairwise tie is stored apart from system names (issue 31): ``{"tie": true}``, no longer
``{"winner": "tie"}``, which a system called "tie" could not be told from.

Rewrites the answers and the gold answers of pairwise studies. An answer stored before this revision on
a page showing a system called "tie" is ambiguous (a tie and a win of that system were stored alike); it
is read as a tie, which the form's tie option was far more often.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_study = sa.table("study", sa.column("id", sa.Integer), sa.column("task", sa.String))
_item = sa.table("item", sa.column("id", sa.Integer), sa.column("study_id", sa.Integer), sa.column("gold", sa.JSON))
_assignment = sa.table("assignment", sa.column("id", sa.Integer), sa.column("item_id", sa.Integer))
_answer = sa.table(
    "answer", sa.column("id", sa.Integer), sa.column("assignment_id", sa.Integer), sa.column("choices", sa.JSON)
)
OLD, NEW = {"winner": "tie"}, {"tie": True}


def _rewrite(choices: dict | None, old: dict, new: dict) -> dict | None:
    if not isinstance(choices, dict):
        return choices
    return {criterion: new if choice == old else choice for criterion, choice in choices.items()}


def _convert(old: dict, new: dict) -> None:
    bind = op.get_bind()
    pairwise = sa.select(_study.c.id).where(_study.c.task == "pairwise")
    golds = bind.execute(sa.select(_item.c.id, _item.c.gold).where(_item.c.study_id.in_(pairwise))).all()
    for item_id, gold in golds:
        if (changed := _rewrite(gold, old, new)) != gold:
            bind.execute(sa.update(_item).where(_item.c.id == item_id).values(gold=changed))
    answers = bind.execute(
        sa.select(_answer.c.id, _answer.c.choices)
        .join(_assignment, _assignment.c.id == _answer.c.assignment_id)
        .join(_item, _item.c.id == _assignment.c.item_id)
        .where(_item.c.study_id.in_(pairwise))
    ).all()
    for answer_id, choices in answers:
        if (changed := _rewrite(choices, old, new)) != choices:
            bind.execute(sa.update(_answer).where(_answer.c.id == answer_id).values(choices=changed))


def upgrade() -> None:
    """``{"winner": "tie"}`` -> ``{"tie": true}`` in pairwise answers and gold answers."""
    _convert(OLD, NEW)


def downgrade() -> None:
    """``{"tie": true}`` -> ``{"winner": "tie"}``."""
    _convert(NEW, OLD)
