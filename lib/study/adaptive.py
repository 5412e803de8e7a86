"""Adaptive assignment: the next pages of a study from the leaderboard's "annotate next" rule.

The Leaderboard (and ``python -m lib rank --next N``) scores (system pair, prompt) judgments by how
much each would shrink the ranking's uncertainty (:mod:`lib.ranking.active`, Chatbot Arena's
active-sampling rule on the posterior). :func:`extend` turns that batch, best first, into new pages of
a running study: each row's item (the prompt's page showing both systems) goes to ``per_prompt`` more
annotators who have not judged it, the least loaded first, as pages after their last one, with a
random shown order. Annotators then find the new pages on their links (their progress counts them).
Run it again as votes arrive: judgments -> leaderboard -> next batch -> pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import select

from lib.study.db import transaction
from lib.study.errors import StudyError
from lib.study.export import load_study
from lib.study.models import Assignment, Item, Study
from lib.tables import row_numbers, text

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Extended:
    """What :func:`extend` added: ``pages`` per annotator label, and the batch's prompts it could not
    give to anyone (every active annotator had judged them, or no item shows that pair)."""

    pages: dict[str, int]
    unplaced: list[str]


def extend(
    study_id: int,
    batch: pd.DataFrame,
    *,
    per_prompt: int = 1,
    max_items: int | None = None,
    seed: int = 0,
    url: str | None = None,
    file: str | None = None,
) -> Extended:
    """Add pages for the (pair, prompt) rows of ``batch`` to a study.

    Parameters
    ----------
    study_id : int
        The study.
    batch : pandas.DataFrame
        ``system_a, system_b, prompt_id`` rows, best first (:data:`lib.ranking.active.NEXT_COLUMNS`).
    per_prompt : int
        More annotators per item of the batch.
    max_items : int, optional
        Use at most this many distinct items (from the top of the batch).
    seed : int
        Seed of the ties between equally loaded annotators and of the shown orders.
    url : str, optional
        The database.
    file : str, optional
        The batch's file name, for messages.

    Returns
    -------
    Extended

    Raises
    ------
    StudyError
        No study of that id, a batch without the columns or with a blank cell (file, rows and column
        named), ``per_prompt`` below 1.

    Notes
    -----
    The study's row is locked first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``
    serialises every writer already), so extends run at once add their pages one after another instead
    of numbering two pages of an annotator alike (before: an IntegrityError in 1 of 4 on PostgreSQL).
    """
    _check_batch(batch, file)
    if per_prompt < 1:
        raise StudyError("give each item of the batch to at least one more annotator")
    rng = np.random.default_rng(seed)
    added: dict[str, int] = {}
    unplaced: list[str] = []
    with transaction(url) as session:
        session.execute(select(Study.id).where(Study.id == study_id).with_for_update())
        study = load_study(session, study_id)
        people = [p for p in study.annotators if p.active]
        items = [it for it in session.scalars(select(Item).where(Item.study_id == study_id)) if it.gold is None]
        chosen: list[Item] = []
        for row in batch.itertuples(index=False):
            pair = {str(row.system_a), str(row.system_b)}
            item = next((it for it in items if it.prompt_id == str(row.prompt_id) and pair <= set(it.texts())), None)
            if item is None:
                unplaced.append(str(row.prompt_id))
            elif item not in chosen:
                chosen.append(item)
        for item in chosen[:max_items]:
            seen = {p.id for p in people if any(a.item_id == item.id for a in p.assignments)}
            free = [p for p in people if p.id not in seen]
            free.sort(key=lambda p: (len(p.assignments), rng.random()))
            if not free:
                unplaced.append(item.prompt_id)
            for person in free[:per_prompt]:
                systems = list(item.texts())
                page = max((a.page for a in person.assignments), default=0) + 1
                asg = Assignment(item=item, page=page, shown_order=[systems[i] for i in rng.permutation(len(systems))])
                person.assignments.append(asg)
                added[person.label] = added.get(person.label, 0) + 1
        session.flush()
    return Extended(added, unplaced)


def _check_batch(batch: pd.DataFrame, file: str | None) -> None:
    """The batch has the columns of a next batch and no blank cell in them."""
    key = ("system_a", "system_b", "prompt_id")
    missing = [c for c in key if c not in batch.columns]
    if missing:
        raise StudyError(
            f"the next batch needs the columns {', '.join(key)} ({', '.join(missing)} missing; "
            "`rank --next N` writes them)",
            file=file,
            column=missing[0],
        )
    for column in key:
        blank = text(batch[column]) == ""
        if blank.any():
            raise StudyError("blank cell", file=file, rows=row_numbers(batch)[blank].tolist(), column=column)
