"""A study from its items: stored with its annotators (each a random token) and their pages."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from sqlalchemy import select

from lib.study.assign import assign
from lib.study.db import transaction
from lib.study.errors import StudyError
from lib.study.items import ItemSpec
from lib.study.models import Annotator, Assignment, Item, Study
from lib.study.tasks import Scale, task_spec

if TYPE_CHECKING:
    import pandas as pd

TOKEN_BYTES = 24
"""Random bytes of an annotator's token (``secrets.token_urlsafe``: 32 URL-safe characters, 192 bits)."""

TOKEN_PARAM = "study_token"
"""The URL query parameter of an annotator's link (``/?study_token=...``)."""

DEFAULT_PER_ITEM = 3
"""Annotators per item when the Study planner has no cheapest design to offer."""
MAX_CRITERIA = 10


@dataclass(frozen=True)
class Created:
    """A study just stored: its id and ``(label, token)`` per annotator."""

    study_id: int
    tokens: list[tuple[str, str]]


@dataclass(frozen=True)
class PlannedDesign:
    """The Study planner's cheapest design that reaches its target power (the study's defaults).

    Attributes
    ----------
    per_item : int
        Annotators per item.
    prompts : int
        Prompts per comparison.
    strategy, analysis : str
        How the prompts are chosen and the analysis whose power was simulated.
    power, cost : float
        Its simulated power and cost (the planner's cost per hour times its hours).
    """

    per_item: int
    prompts: int
    strategy: str
    analysis: str
    power: float
    cost: float

    def describe(self) -> str:
        """A sentence on where the default comes from (plain text: escape it for Markdown)."""
        return (
            f"the Study planner's cheapest design reaching its target power: {self.prompts} prompts x "
            f"{self.per_item} annotators per item ({self.analysis}, {self.strategy} prompts; power "
            f"{self.power:.2f}, cost {self.cost:,.2f})"
        )


def planned_design(cheapest: pd.DataFrame | None) -> PlannedDesign | None:
    """The cheapest of the planner's designs that reached the target power, None when there is none.

    Parameters
    ----------
    cheapest : pandas.DataFrame or None
        :func:`lib.planning.power.cheapest`'s table (one row per strategy and analysis: ``reached``,
        ``prompts``, ``annotators``, ``power``, ``cost``), or None when no plan was run.

    Returns
    -------
    PlannedDesign or None
        The row of least cost among those with ``reached`` (ties: fewer prompts, then the table's
        order).
    """
    if cheapest is None or cheapest.empty:
        return None
    reached = cheapest[cheapest["reached"].astype(bool)]
    if reached.empty:
        return None
    row = reached.sort_values(["cost", "prompts"], kind="stable").iloc[0]
    return PlannedDesign(
        per_item=int(row["annotators"]),
        prompts=int(row["prompts"]),
        strategy=str(row["strategy"]),
        analysis=str(row["analysis"]),
        power=float(row["power"]),
        cost=float(row["cost"]),
    )


def annotator_link(base_url: str, token: str) -> str:
    """The link an annotator opens: ``base_url/?study_token=TOKEN``."""
    return f"{base_url.rstrip('/')}/?{urlencode({TOKEN_PARAM: token})}"


def parse_criteria(text: str | Sequence[str]) -> list[str]:
    """The criteria of a study from ``"consistency,fluency"`` (or a list): stripped, distinct, non-empty.

    Raises
    ------
    StudyError
        No criterion, an empty one, a repeated one, more than :data:`MAX_CRITERIA` or a name longer
        than 100 characters.
    """
    names = [c.strip() for c in (text.split(",") if isinstance(text, str) else text)]
    if not names or any(not c for c in names):
        raise StudyError("name at least one criterion, without empty names (e.g. consistency,fluency)")
    if len(set(names)) < len(names):
        raise StudyError("a criterion is named twice")
    if len(names) > MAX_CRITERIA or any(len(c) > 100 for c in names):
        raise StudyError(f"at most {MAX_CRITERIA} criteria of at most 100 characters each")
    return names


def create_study(
    items: Sequence[ItemSpec],
    *,
    task: str,
    criteria: Sequence[str],
    annotators: int,
    per_item: int = DEFAULT_PER_ITEM,
    gold_rate: float = 0.0,
    instructions: str = "",
    example: str = "",
    name: str = "study",
    seed: int = 0,
    url: str | None = None,
    scale: Scale | None = None,
) -> Created:
    """Store a study, its items, ``annotators`` annotators with a random token each, and their pages.

    Parameters
    ----------
    items : sequence of ItemSpec
        From :func:`lib.study.items.read_items` (or :func:`lib.study.demo.demo_items`).
    task : str
        A key of :data:`lib.study.tasks.TASKS`.
    criteria : sequence of str
        What each page asks about (:func:`parse_criteria`).
    annotators, per_item, gold_rate, seed
        See :func:`lib.study.assign.assign`.
    instructions, example : str
        The researcher's Markdown, shown before the first page (rendered safely).
    name : str
        The study's name (at most 200 characters).
    url : str, optional
        The database (default :func:`lib.study.db.database_url`).
    scale : Scale, optional
        A rated task's scale (default :class:`lib.study.tasks.Scale`: 1 to 5); refused for the others.

    Returns
    -------
    Created

    Raises
    ------
    StudyError
        Unknown task, bad criteria, a name too long, a scale for a task without one, or an assignment
        that cannot be made.
    """
    spec = task_spec(task)
    if scale is not None and not spec.rated:
        raise StudyError(f"a {task} study has no rating scale")
    if spec.rated:
        scale = scale or Scale()
    criteria = parse_criteria(criteria)
    if not name.strip() or len(name) > 200:
        raise StudyError("the study's name must have 1 to 200 characters")
    if annotators < 1:
        raise StudyError("a study needs at least one annotator")
    regular = [i for i, it in enumerate(items) if it.gold is None]
    gold = [i for i, it in enumerate(items) if it.gold is not None]
    plan = assign(
        regular,
        gold,
        [len(it.responses) for it in items],
        annotators=annotators,
        per_item=per_item,
        gold_rate=gold_rate,
        seed=seed,
    )
    width = len(str(annotators))
    with transaction(url) as session:
        study = Study(
            name=name.strip(),
            task=task,
            criteria=list(criteria),
            per_item=per_item,
            gold_rate=gold_rate,
            instructions=instructions,
            example=example,
            seed=seed,
            scale=scale.to_json() if scale is not None else None,
            created_at=datetime.now(UTC),
        )
        stored = [
            Item(
                study=study,
                prompt_id=it.prompt_id,
                systems_key="\x1f".join(it.systems),
                prompt_text=it.prompt_text,
                responses=[list(r) for r in it.responses],
                gold=it.gold,
            )
            for it in items
        ]
        session.add_all([study, *stored])
        tokens = []
        for a, (pages, orders) in enumerate(zip(plan.pages, plan.orders, strict=True)):
            token = secrets.token_urlsafe(TOKEN_BYTES)
            person = Annotator(study=study, label=f"annotator-{a + 1:0{width}d}", token=token, active=True)
            session.add(person)
            for page, (item, order) in enumerate(zip(pages, orders, strict=True), start=1):
                systems = items[item].systems
                session.add(
                    Assignment(annotator=person, item=stored[item], page=page, shown_order=[systems[p] for p in order])
                )
            tokens.append((person.label, token))
        session.flush()
        return Created(study.id, tokens)


def revoke(study_id: int, label: str, *, url: str | None = None) -> None:
    """Revoke an annotator's link: their token is refused from now on; their answers stay.

    Raises
    ------
    StudyError
        No annotator of that label in the study.
    """
    with transaction(url) as session:
        person = session.scalar(select(Annotator).where(Annotator.study_id == study_id, Annotator.label == label))
        if person is None:
            raise StudyError(f"study {study_id} has no annotator '{label}'")
        person.active = False
