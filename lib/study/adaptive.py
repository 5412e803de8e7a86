"""Adaptive assignment: the next pages of a study from the leaderboard's "annotate next" rule.

The Leaderboard (and ``python -m lib rank --next N``) scores (system pair, prompt) judgments by how
much each would shrink the ranking's uncertainty (:mod:`lib.ranking.active`, Chatbot Arena's
active-sampling rule on the posterior). :func:`extend` turns that batch, best first, into new pages of
a running study: each row's item (the prompt's page showing both systems) goes to ``per_prompt`` more
annotators who have not judged it (and have not failed the attention checks), the least loaded first, as
pages after their last one, shown in the order that keeps their positions balanced
(:mod:`lib.study.order`). Where every annotator has judged an item (with the defaults of 3 annotators and 3
per item, every item), new annotators are made for it when asked (``new_annotators``): as few as the batch
needs, each given the items no one else can take, with the study's share of gold items and attention
checks; their links (or, for a crowd study, new places on its link) are returned. Annotators find the new
pages on their links (their progress counts them). Run it again as votes arrive: judgments -> leaderboard
-> next batch -> pages.
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import select

from lib.io.tables import row_numbers, text
from lib.study.assign import gold_count
from lib.study.checks import failed
from lib.study.create import TOKEN_BYTES
from lib.study.db import transaction
from lib.study.errors import StudyError
from lib.study.export import check_passes, load_study
from lib.study.models import Annotator, Assignment, Item, Study
from lib.study.order import balanced_orders

if TYPE_CHECKING:
    import pandas as pd

NOT_IN_STUDY = "no page of the study shows that pair on that prompt"
JUDGED_BY_ALL = "every annotator has judged it"


@dataclass(frozen=True)
class Extended:
    """What :func:`extend` did.

    Attributes
    ----------
    pages : dict
        New pages per annotator label (new annotators included).
    new : list of (label, token)
        The annotators made for the batch (``new_annotators``): their links, or a crowd study's new places.
    not_in_study : list of str
        Prompts of the batch that no item of the study shows with that pair.
    judged_by_all : list of str
        Prompts whose item every active annotator had judged, so it got no page (without ``new_annotators``).
    fewer : list of str
        Prompts whose item got pages for fewer than ``per_prompt`` more annotators (some had judged it all).
    """

    pages: dict[str, int]
    new: list[tuple[str, str]] = field(default_factory=list)
    not_in_study: list[str] = field(default_factory=list)
    judged_by_all: list[str] = field(default_factory=list)
    fewer: list[str] = field(default_factory=list)

    @property
    def unplaced(self) -> list[str]:
        """The batch's prompts that got no page: not in the study, then judged by every annotator."""
        return self.not_in_study + self.judged_by_all

    def problems(self) -> list[str]:
        """What was not placed and why, with what to do (plain text; empty when everything was placed)."""
        out = []
        if self.judged_by_all:
            out.append(
                f"{len(self.judged_by_all)} item(s) not placed because {JUDGED_BY_ALL} "
                f"({', '.join(dict.fromkeys(self.judged_by_all))}): add new annotators for them (the Studies "
                "page's 'new annotator links where needed', or `study extend --new-links FILE`)"
            )
        if self.fewer:
            out.append(
                f"{len(self.fewer)} item(s) placed with fewer annotators than asked, as the others had judged them "
                f"({', '.join(dict.fromkeys(self.fewer))})"
            )
        if self.not_in_study:
            out.append(
                f"{len(self.not_in_study)} row(s) of the batch not placed because {NOT_IN_STUDY} "
                f"({', '.join(dict.fromkeys(self.not_in_study))}): rank this study's own judgments"
            )
        return out


def extend(
    study_id: int,
    batch: pd.DataFrame,
    *,
    per_prompt: int = 1,
    max_items: int | None = None,
    seed: int = 0,
    url: str | None = None,
    file: str | None = None,
    new_annotators: bool = False,
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
    new_annotators : bool
        Make new annotators for the items too few annotators can take (every one has judged them).

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
    with transaction(url) as session:
        session.execute(select(Study.id).where(Study.id == study_id).with_for_update())
        study = load_study(session, study_id)
        # who failed the attention checks gets no more pages
        people = [p for p in study.annotators if p.active and not failed(check_passes(p))]
        items = list(session.scalars(select(Item).where(Item.study_id == study_id)))
        chosen, not_in_study = _items_of(batch, [it for it in items if it.gold is None and not it.check])
        added: Counter[str] = Counter()
        judged_by_all: list[str] = []
        fewer: list[str] = []
        newcomers: list[tuple[Annotator, list[Item]]] = []
        for item in chosen[:max_items]:
            free = [p for p in people if all(a.item_id != item.id for a in p.assignments)]
            free.sort(key=lambda p: (len(p.assignments), rng.random()))
            for person in free[:per_prompt]:
                _add_page(person, item, rng)
                added[person.label] += 1
            short = per_prompt - min(per_prompt, len(free))
            if short and new_annotators:
                for person, theirs in _newcomers_for(study, item, short, newcomers, rng):
                    theirs.append(item)
                    added[person.label] += 1
            elif short:
                (fewer if free else judged_by_all).append(item.prompt_id)
        for person, theirs in newcomers:
            _first_pages(study, person, theirs, items, rng)
        session.flush()
        new = [(p.label, p.token) for p, _ in newcomers]
    return Extended(dict(added), new, not_in_study, judged_by_all, fewer)


def _items_of(batch: pd.DataFrame, items: list[Item]) -> tuple[list[Item], list[str]]:
    """The study's regular items the batch's rows name (each once, best first), and the rows' prompts that
    name none."""
    chosen: list[Item] = []
    missing = []
    for row in batch.itertuples(index=False):
        pair = {str(row.system_a), str(row.system_b)}
        item = next((it for it in items if it.prompt_id == str(row.prompt_id) and pair <= set(it.texts())), None)
        if item is None:
            missing.append(str(row.prompt_id))
        elif item not in chosen:
            chosen.append(item)
    return chosen, missing


def _seen(person: Annotator) -> Counter[tuple[str, int]]:
    """``{(system, position): times}`` the annotator has been shown."""
    return Counter((system, pos) for a in person.assignments for pos, system in enumerate(a.shown_order))


def _add_page(person: Annotator, item: Item, rng: np.random.Generator) -> None:
    """``item`` as the annotator's next page, in the order that balances their positions."""
    systems = list(item.texts())
    order = balanced_orders([systems], rng, _seen(person))[0]
    page = max((a.page for a in person.assignments), default=0) + 1
    person.assignments.append(Assignment(item=item, page=page, shown_order=[systems[i] for i in order]))


def _newcomers_for(
    study: Study, item: Item, short: int, newcomers: list[tuple[Annotator, list[Item]]], rng: np.random.Generator
) -> list[tuple[Annotator, list[Item]]]:
    """``short`` new annotators for ``item``: those made already for this batch who do not have it, the least
    loaded first, and as many more as needed (added to the study)."""
    pool = [(p, theirs) for p, theirs in newcomers if item not in theirs]
    pool.sort(key=lambda pt: (len(pt[1]), rng.random()))
    while len(pool) < short:
        person = Annotator(label=_next_label(study), token=secrets.token_urlsafe(TOKEN_BYTES), active=True)
        study.annotators.append(person)
        newcomers.append((person, []))
        pool.append(newcomers[-1])
    return pool[:short]


def _next_label(study: Study) -> str:
    """The label after the study's last ``annotator-N`` (as many digits as the first label has)."""
    numbers = [re.fullmatch(r"annotator-(\d+)", a.label) for a in study.annotators]
    found = [m for m in numbers if m is not None]
    width = len(found[0].group(1)) if found else 1
    return f"annotator-{max((int(m.group(1)) for m in found), default=0) + 1:0{width}d}"


def _first_pages(
    study: Study, person: Annotator, theirs: list[Item], items: list[Item], rng: np.random.Generator
) -> None:
    """A new annotator's pages: the batch's items with the study's share of gold items and attention checks,
    in a random order, their positions balanced."""
    gold = [it for it in items if it.gold is not None and not it.check]
    checks = [it for it in items if it.check]
    n = len(theirs)
    extra = [
        pool[int(i)]
        for pool, rate, other in (
            (gold, study.gold_rate, study.check_rate),
            (checks, study.check_rate, study.gold_rate),
        )
        for i in rng.choice(len(pool), size=gold_count(n, rate, len(pool), other), replace=False)
    ]
    mine = [*theirs, *extra]
    mine = [mine[i] for i in rng.permutation(len(mine))]
    orders = balanced_orders([list(it.texts()) for it in mine], rng)
    for page, (item, order) in enumerate(zip(mine, orders, strict=True), start=1):
        systems = list(item.texts())
        person.assignments.append(Assignment(item=item, page=page, shown_order=[systems[i] for i in order]))


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
