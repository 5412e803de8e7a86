"""The annotator's side: a token in, the next page out, an answer committed once.

The annotator never sees system names: passages are labelled A, B, C, ... in the order shown (the
order stored with the assignment), and the form answers with those labels. State lives in the
database only, so a refresh, a closed tab or a server restart resumes at the first page without an
answer. The time on a page runs from when it was first shown (stored) to when its answer is committed.

Every request is checked: a malformed, unknown or revoked token raises
:class:`~lib.study.errors.TokenError`; a task that is not the token's own raises
:class:`~lib.study.errors.TaskError` (in the same words as a task that does not exist); a second
answer to a task counts once: the same choices return the stored answer, other choices raise
:class:`~lib.study.errors.AnswerConflict`. The answer's unique constraint makes this hold under
concurrent submissions (the insert that loses the race is rolled back and compared with the winner).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from lib.study.checks import instruction
from lib.study.db import transaction
from lib.study.errors import AnswerConflict, AnswerError, TaskError, TokenError
from lib.study.models import Annotator, Answer, Assignment
from lib.study.tasks import Scale, check_choices, task_spec

TOKEN_FORMAT = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""What a token can look like; anything else is refused before the database is asked."""

LABELS = string.ascii_uppercase
"""Passage labels by position shown (A = first)."""


@dataclass(frozen=True)
class Page:
    """One page to judge: the item's text and the passages in the order shown, labelled A, B, ...

    Attributes
    ----------
    assignment_id : int
        The task's id (sent back with the answer).
    number, pages : int
        This page's number (1-based) and the annotator's number of pages.
    prompt_text : str
        What the page shows above the passages (the researcher's text: render it escaped).
    passages : list of (label, text)
        In the order shown.
    instruction : str
        An attention check's line (what to choose, :func:`lib.study.checks.instruction`), "" on other pages.
    """

    assignment_id: int
    number: int
    pages: int
    prompt_text: str
    passages: list[tuple[str, str]]
    instruction: str = ""


@dataclass(frozen=True)
class Progress:
    """What the annotator's view shows: the study's texts, progress, the page to judge (None: done), for a
    rated task the scale, the questions' label of each criterion, and what to do at the end (a completion
    code, a redirect URL: a crowd platform's)."""

    study_name: str
    task: str
    criteria: list[str]
    instructions: str
    example: str
    label: str
    done: int
    total: int
    page: Page | None
    scale: Scale | None = None
    labels: dict[str, str] = field(default_factory=dict)
    completion_code: str | None = None
    redirect_url: str | None = None

    def label_of(self, criterion: str) -> str:
        """The word the questions use for ``criterion`` (its own name when the study gave no label)."""
        return self.labels.get(criterion, criterion)


@dataclass(frozen=True)
class Submitted:
    """An answer stored: its id, the seconds on the page, and whether it had been stored before."""

    answer_id: int
    seconds: float
    repeated: bool


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _annotator(session: Session, token: object) -> Annotator:
    if not isinstance(token, str) or TOKEN_FORMAT.fullmatch(token) is None:
        raise TokenError("this link is not valid: ask the researcher for yours")
    person = session.scalar(
        select(Annotator)
        .where(Annotator.token == token)
        .options(selectinload(Annotator.assignments).selectinload(Assignment.answer))
    )
    if person is None or not person.active:
        raise TokenError("this link is not valid: ask the researcher for yours")
    return person


def open_page(token: str, *, url: str | None = None, now: datetime | None = None, show: bool = True) -> Progress:
    """The annotator's progress and the first page without an answer, marked as shown (its time starts).

    Parameters
    ----------
    token : str
        The annotator's token (from their link).
    url : str, optional
        The database (default :func:`lib.study.db.database_url`).
    now : datetime, optional
        The moment (UTC) the page is shown; default: now.
    show : bool
        Whether the page is shown now (False: the view shows the instructions first, and the page's time
        starts when it is shown).

    Raises
    ------
    TokenError
        A malformed, unknown or revoked token.
    """
    with transaction(url) as session:
        person = _annotator(session, token)
        study = person.study
        todo = [a for a in person.assignments if a.answer is None]
        labels = {c: (study.labels or {}).get(c, c) for c in study.criteria}
        page = None
        if todo:
            current = todo[0]
            if current.shown_at is None and show:
                current.shown_at = now or _now()
            item = current.item
            page = Page(
                assignment_id=current.id,
                number=current.page,
                pages=len(person.assignments),
                prompt_text=item.prompt_text,
                passages=[(LABELS[i], item.texts()[system]) for i, system in enumerate(current.shown_order)],
                instruction=instruction(item.gold or {}, current.shown_order, labels, LABELS) if item.check else "",
            )
        return Progress(
            study_name=study.name,
            task=study.task,
            criteria=list(study.criteria),
            instructions=study.instructions,
            example=study.example,
            label=person.label,
            done=len(person.assignments) - len(todo),
            total=len(person.assignments),
            page=page,
            scale=Scale.from_json(study.scale),
            labels=labels,
            completion_code=study.completion_code,
            redirect_url=study.redirect_url,
        )


def _by_system(task: str, choices: Mapping[str, object], order: list[str]) -> dict[str, object]:
    """The form's labels (A, B, ...) replaced by the systems shown at those positions."""
    systems = dict(zip(LABELS, order, strict=False))
    if not isinstance(choices, Mapping):
        raise AnswerError("the answer must give a choice per criterion")
    out: dict[str, object] = {}
    for criterion, choice in choices.items():
        if not isinstance(choice, Mapping):
            raise AnswerError(f"{criterion}: no choice given")
        out[criterion] = task_spec(task).relabel(choice, systems, str(criterion))
    return out


def submit(
    token: str,
    assignment_id: object,
    choices: Mapping[str, object],
    *,
    url: str | None = None,
    now: datetime | None = None,
) -> Submitted:
    """Store the answer to one of the annotator's tasks, in one transaction.

    Parameters
    ----------
    token : str
        The annotator's token.
    assignment_id : int
        The task (:attr:`Page.assignment_id`).
    choices : mapping
        ``{criterion: {"most": label, "least": label}}`` (best-worst), ``{criterion: {"winner":
        label or "tie"}}`` (pairwise: "tie" is the form's tie option, stored apart from system names) or
        ``{criterion: {label: rating}}`` (Likert: every passage, a whole number on the study's scale),
        labels as shown (A, B, ...).
    url : str, optional
        The database.
    now : datetime, optional
        The moment of the answer (UTC); default: now.

    Returns
    -------
    Submitted
        ``seconds`` = the answer's moment minus the page's first showing (0 if never shown).

    Raises
    ------
    TokenError
        A malformed, unknown or revoked token.
    TaskError
        ``assignment_id`` is not one of this annotator's tasks.
    AnswerError
        A choice missing, not among the passages shown, MOST = LEAST, an unknown criterion, a passage
        not rated or a rating off the scale.
    AnswerConflict
        The task was answered before with other choices.
    """
    moment = now or _now()
    try:
        with transaction(url) as session:
            asg, normalized = _checked(session, token, assignment_id, choices)
            if asg.answer is not None:
                return _repeat(asg.answer, normalized)
            seconds = max(0.0, (moment - _aware(asg.shown_at)).total_seconds()) if asg.shown_at else 0.0
            answer = Answer(assignment_id=asg.id, choices=normalized, seconds=seconds, submitted_at=moment)
            session.add(answer)
            session.flush()
            return Submitted(answer.id, seconds, repeated=False)
    except IntegrityError:  # a concurrent submission of the same task was committed first
        with transaction(url) as session:
            asg, normalized = _checked(session, token, assignment_id, choices)
            if asg.answer is None:
                raise
            return _repeat(asg.answer, normalized)


def _checked(
    session: Session, token: str, assignment_id: object, choices: Mapping[str, object]
) -> tuple[Assignment, dict]:
    person = _annotator(session, token)
    mine = {a.id: a for a in person.assignments}
    if not isinstance(assignment_id, int) or isinstance(assignment_id, bool) or assignment_id not in mine:
        raise TaskError(f"there is no task {assignment_id!r} for this link")
    asg = mine[assignment_id]
    study = person.study
    by_system = _by_system(study.task, choices, asg.shown_order)
    return asg, check_choices(study.task, by_system, asg.shown_order, study.criteria, Scale.from_json(study.scale))


def _repeat(answer: Answer, normalized: dict) -> Submitted:
    if answer.choices != normalized:
        raise AnswerConflict("this page was already answered; the first answer stands")
    return Submitted(answer.id, answer.seconds, repeated=True)
