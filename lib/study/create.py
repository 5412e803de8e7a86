"""A study from its items: stored with its annotators (each a random token) and their pages.

Before anything is stored, the texts every annotator reads (title, instructions, example, questions) are
checked for the systems' names (:mod:`lib.study.blinding`); instructed attention checks are made at the
asked rate (:mod:`lib.study.checks`); a study recruited on a crowd platform gets its one public link's key
and the secret its participants' ids are hashed with (:mod:`lib.study.crowd`).
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

import numpy as np
from sqlalchemy import select

from lib.study.assign import assign, check_rates, gold_count, most_regular_pages
from lib.study.blinding import SystemNamesShown, names_shown, study_texts
from lib.study.checks import make_checks
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
MAX_LABEL_CHARS = 100
CROWD_KEY_BYTES = 18
"""Random bytes of a crowd study's link key (24 URL-safe characters): the link is public, so the key only
keeps other studies' links from being guessed."""
CODE_CHARS = 8
"""Characters of a completion code made up when the researcher gives none (A-Z, 0-9)."""


@dataclass(frozen=True)
class Created:
    """A study just stored: its id, ``(label, token)`` per annotator and, for a crowd study, its link's key."""

    study_id: int
    tokens: list[tuple[str, str]]
    crowd_key: str | None = None


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


def parse_labels(text: str | Sequence[str] | None, criteria: Sequence[str]) -> dict[str, str] | None:
    """The questions' label of each criterion from ``"consistent,fluent"`` (or a list), one per criterion in
    their order; None for no labels (each criterion's name is its label).

    Raises
    ------
    StudyError
        Not one label per criterion, an empty label, or one longer than :data:`MAX_LABEL_CHARS` characters.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    labels = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    if len(labels) != len(criteria) or any(not t for t in labels):
        raise StudyError(
            f"give one label per criterion, in their order ({len(criteria)}: {', '.join(criteria)}), or none; "
            f"got {len(labels)}{' with an empty one' if any(not t for t in labels) else ''}"
        )
    if any(len(t) > MAX_LABEL_CHARS for t in labels):
        raise StudyError(f"a label has at most {MAX_LABEL_CHARS} characters")
    return dict(zip(criteria, labels, strict=True))


def _completion(crowd: bool, code: str | None, redirect: str | None) -> tuple[str | None, str | None]:
    """The completion code (made up for a crowd study without one) and the redirect URL, checked."""
    code = (code or "").strip() or None
    if code is None and crowd:
        code = "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(CODE_CHARS))
    if code is not None and (len(code) > 100 or not code.isprintable()):
        raise StudyError("a completion code has 1 to 100 printable characters")
    redirect = (redirect or "").strip() or None
    if redirect is not None:
        parts = urlsplit(redirect)
        if parts.scheme not in ("http", "https") or not parts.netloc or len(redirect) > 2000:
            raise StudyError(f"the redirect URL must be an http(s) address, not '{redirect[:100]}'")
    return code, redirect


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
    labels: Mapping[str, str] | None = None,
    check_rate: float = 0.0,
    crowd: bool = False,
    completion_code: str | None = None,
    redirect_url: str | None = None,
    allow_system_names: bool = False,
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
    labels : mapping, optional
        ``{criterion: label}``: the word the questions use (:func:`parse_labels`; default the criterion's name).
    check_rate : float
        Share of each annotator's pages that are instructed attention checks (:mod:`lib.study.checks`).
    crowd : bool
        Recruit on a crowd platform: one public study link whose visitors take the ``annotators`` places
        (:mod:`lib.study.crowd`).
    completion_code, redirect_url : str, optional
        Shown when an annotator has answered every page (a crowd study without a code gets a random one).
    allow_system_names : bool
        Store the study even though its title, instructions, example or questions name a system.

    Returns
    -------
    Created

    Raises
    ------
    SystemNamesShown
        A system's name in the texts annotators read, unless ``allow_system_names``.
    StudyError
        Unknown task, bad criteria or labels, a name too long, a scale for a task without one, a bad
        completion code or redirect URL, or an assignment that cannot be made.
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
    labels = parse_labels([labels[c] for c in criteria] if labels else None, criteria)
    code, redirect = _completion(crowd, completion_code, redirect_url)
    texts = study_texts(name, instructions, example, criteria, labels)
    found = names_shown(texts, {s for it in items for s in it.systems})
    if found and not allow_system_names:
        raise SystemNamesShown(found)
    check_rates(gold_rate, check_rate)
    regular = [i for i, it in enumerate(items) if it.gold is None]
    gold = [i for i, it in enumerate(items) if it.gold is not None]
    most = gold_count(most_regular_pages(len(regular), per_item, annotators), check_rate, len(items), gold_rate)
    rng = np.random.default_rng((seed, 33))  # apart from the assignment's stream
    checks = make_checks(items, most, task=task, criteria=criteria, rng=rng, scale=scale)
    items = [*items, *checks]
    plan = assign(
        regular,
        gold,
        [it.systems for it in items],
        annotators=annotators,
        per_item=per_item,
        gold_rate=gold_rate,
        seed=seed,
        checks=list(range(len(items) - len(checks), len(items))),
        check_rate=check_rate,
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
            labels=labels,
            check_rate=check_rate,
            crowd_key=secrets.token_urlsafe(CROWD_KEY_BYTES) if crowd else None,
            crowd_secret=secrets.token_hex(32) if crowd else None,
            completion_code=code,
            redirect_url=redirect,
            created_at=datetime.now(UTC),
        )
        first_check = len(items) - len(checks)
        stored = [
            Item(
                study=study,
                prompt_id=it.prompt_id,
                systems_key="\x1f".join(it.systems),
                prompt_text=it.prompt_text,
                responses=[list(r) for r in it.responses],
                gold=it.gold,
                check=i >= first_check,
            )
            for i, it in enumerate(items)
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
        return Created(study.id, tokens, study.crowd_key)


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
