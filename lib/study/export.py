"""The collected judgments as the CSV the Data page reads (``lib.judgments.formats``' best-worst, pairwise or ratings).

Best-worst: one row per passage shown per criterion, ``annotator, page, prompt_id, prompt_text,
criterion, system, response, judgment, position, seconds`` (``judgment`` most / least / middle,
``position`` 1 = shown first). Pairwise: one row per criterion, ``annotator, page, prompt_id,
prompt_text, criterion, system_a, system_b, response_a, response_b, choice, position, seconds``
(``system_a`` the alphabetically first, ``choice`` A / B / tie, ``position`` the system shown first,
which :mod:`lib.judgments.formats` reads for the leaderboard's position bias). Likert (the ratings format): one
row per passage shown per criterion, ``annotator, page, prompt_id, prompt_text, criterion, system,
response, score, shown_position, seconds`` (``score`` the rating, ``shown_position`` 1 = shown first;
not named ``position``, which the Data page would take for the ranking format's rank). ``seconds`` is
the time on the page (all its criteria and passages); ``annotator`` is the annotator's label, never
their token (nor, for a crowd platform's participant, their platform id). Gold items are left out unless
asked for; instructed attention checks always (they are not judgments of the systems). The judgments of
annotators who failed the attention checks (:func:`lib.study.checks.failed`) are left out unless asked for
(:class:`Export` says whose and how many rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from lib.study.checks import failed
from lib.study.db import transaction
from lib.study.errors import StudyError
from lib.study.models import Annotator, Assignment, Study
from lib.study.tasks import gold_correct, task_spec

if TYPE_CHECKING:
    import pandas as pd


def load_study(session, study_id: int) -> Study:
    """The study with its annotators, their assignments, items and answers loaded.

    Raises
    ------
    StudyError
        No study of that id.
    """
    study = session.scalar(
        select(Study)
        .where(Study.id == study_id)
        .options(
            selectinload(Study.annotators)
            .selectinload(Annotator.assignments)
            .options(selectinload(Assignment.answer), selectinload(Assignment.item))
        )
    )
    if study is None:
        raise StudyError(f"there is no study {study_id}")
    return study


@dataclass(frozen=True)
class Export:
    """A study's judgments and what was left out of them.

    Attributes
    ----------
    table : pandas.DataFrame
        The columns of the study's task (:attr:`lib.study.tasks.TaskSpec.columns`; :func:`export_study`).
    failed : list of str
        The annotators who failed the attention checks, in label order (whether or not they were kept).
    left_out : list of str
        Those of them whose judgments are not in ``table``.
    rows_left_out : int
        Rows of theirs not in ``table``.
    """

    table: pd.DataFrame
    failed: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    rows_left_out: int = 0

    def said(self) -> str:
        """What was left out, for people ("" when nothing was); plain text."""
        if not self.failed:
            return ""
        who = ", ".join(self.failed)
        if not self.left_out:
            return f"{len(self.failed)} annotator(s) failed the attention checks and are kept: {who}"
        return (
            f"Left out {len(self.left_out)} annotator(s) who failed the attention checks ({who}: "
            f"{self.rows_left_out} rows)"
        )


def check_passes(person: Annotator) -> list[bool]:
    """Per attention-check page the annotator answered, whether they chose what it told them to (every
    criterion); the study must be loaded with :func:`load_study`."""
    return [
        all(gold_correct(a.item.gold or {}, a.answer.choices))
        for a in person.assignments
        if a.item.check and a.answer is not None
    ]


def export_study(
    study_id: int, *, include_gold: bool = False, keep_failed: bool = False, url: str | None = None
) -> Export:
    """The study's answers as a table the Data page and ``python -m lib rank`` read, and what was left out.

    Parameters
    ----------
    study_id : int
        The study.
    include_gold : bool
        Keep the gold items' answers (left out by default: they are known answers, not judgments).
    keep_failed : bool
        Keep the judgments of annotators who failed the attention checks (left out by default).
    url : str, optional
        The database.

    Returns
    -------
    Export
        ``table``: the columns of the study's task (:attr:`lib.study.tasks.TaskSpec.columns`), sorted by
        annotator, page, criterion (the study's order) and position; ``seconds`` a float, ``page``,
        (best-worst) ``position`` and (Likert) ``score`` and ``shown_position`` integers. Empty (with those
        columns) before any answer.

    Raises
    ------
    StudyError
        No study of that id.
    """
    import pandas as pd

    with transaction(url) as session:
        study = load_study(session, study_id)
        rows: list[dict] = []
        flagged, left_out, dropped = [], [], 0
        for person in study.annotators:
            mine = _rows(study, person, include_gold)
            if failed(check_passes(person)):
                flagged.append(person.label)
                if not keep_failed:
                    left_out.append(person.label)
                    dropped += len(mine)
                    continue
            rows += mine
        table = pd.DataFrame(rows, columns=list(task_spec(study.task).columns))
    return Export(table, flagged, left_out, dropped)


def _rows(study: Study, person: Annotator, include_gold: bool) -> list[dict]:
    """The export's rows of one annotator's answers (no attention check; gold items when asked)."""
    rows: list[dict] = []
    spec = task_spec(study.task)
    for asg in person.assignments:
        if asg.answer is None or asg.item.check or (asg.item.gold is not None and not include_gold):
            continue
        responses = asg.item.texts()
        for criterion in study.criteria:
            base = {
                "annotator": person.label,
                "page": asg.page,
                "prompt_id": asg.item.prompt_id,
                "prompt_text": asg.item.prompt_text,
                "criterion": criterion,
                "seconds": round(asg.answer.seconds, 3),
            }
            rows += spec.rows(base, asg.answer.choices[criterion], responses, asg.shown_order)
    return rows


def export_judgments(
    study_id: int, *, include_gold: bool = False, keep_failed: bool = False, url: str | None = None
) -> pd.DataFrame:
    """:func:`export_study`'s table alone (see there)."""
    return export_study(study_id, include_gold=include_gold, keep_failed=keep_failed, url=url).table
