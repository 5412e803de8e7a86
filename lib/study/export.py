"""The collected judgments as the CSV the Data page reads (``lib.formats``' best-worst, pairwise or ratings).

Best-worst: one row per passage shown per criterion, ``annotator, page, prompt_id, prompt_text,
criterion, system, response, judgment, position, seconds`` (``judgment`` most / least / middle,
``position`` 1 = shown first). Pairwise: one row per criterion, ``annotator, page, prompt_id,
prompt_text, criterion, system_a, system_b, response_a, response_b, choice, position, seconds``
(``system_a`` the alphabetically first, ``choice`` A / B / tie, ``position`` the system shown first,
which :mod:`lib.formats` reads for the leaderboard's position bias). Likert (the ratings format): one
row per passage shown per criterion, ``annotator, page, prompt_id, prompt_text, criterion, system,
response, score, shown_position, seconds`` (``score`` the rating, ``shown_position`` 1 = shown first;
not named ``position``, which the Data page would take for the ranking format's rank). ``seconds`` is
the time on the page (all its criteria and passages); ``annotator`` is the annotator's label, never
their token. Gold items (attention checks) are left out unless asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from lib.study.db import transaction
from lib.study.errors import StudyError
from lib.study.models import Annotator, Assignment, Study
from lib.study.tasks import TIE

if TYPE_CHECKING:
    import pandas as pd

EXPORT_COLUMNS = {
    "bestworst": [
        "annotator",
        "page",
        "prompt_id",
        "prompt_text",
        "criterion",
        "system",
        "response",
        "judgment",
        "position",
        "seconds",
    ],
    "pairwise": [
        "annotator",
        "page",
        "prompt_id",
        "prompt_text",
        "criterion",
        "system_a",
        "system_b",
        "response_a",
        "response_b",
        "choice",
        "position",
        "seconds",
    ],
    "likert": [
        "annotator",
        "page",
        "prompt_id",
        "prompt_text",
        "criterion",
        "system",
        "response",
        "score",
        "shown_position",
        "seconds",
    ],
}
"""The export's columns per task (the Data page guesses every role from these names)."""


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


def _bestworst_rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    judged = {choice["most"]: "most", choice["least"]: "least"}
    return [
        {**base, "system": s, "response": responses[s], "judgment": judged.get(s, "middle"), "position": p}
        for p, s in enumerate(order, start=1)
    ]


def _pairwise_rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    a, b = sorted(order)
    code = TIE if choice.get(TIE) else {a: "A", b: "B"}[choice["winner"]]
    return [
        {
            **base,
            "system_a": a,
            "system_b": b,
            "response_a": responses[a],
            "response_b": responses[b],
            "choice": code,
            "position": order[0],
        }
    ]


def _likert_rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    return [
        {**base, "system": s, "response": responses[s], "score": choice[s], "shown_position": p}
        for p, s in enumerate(order, start=1)
    ]


_ROWS = {"bestworst": _bestworst_rows, "pairwise": _pairwise_rows, "likert": _likert_rows}


def export_judgments(study_id: int, *, include_gold: bool = False, url: str | None = None) -> pd.DataFrame:
    """The study's answers as a table the Data page and ``python -m lib rank`` read.

    Parameters
    ----------
    study_id : int
        The study.
    include_gold : bool
        Keep the gold items' answers (left out by default: they are attention checks).
    url : str, optional
        The database.

    Returns
    -------
    pandas.DataFrame
        :data:`EXPORT_COLUMNS` of the study's task, sorted by annotator, page, criterion (the
        study's order) and position; ``seconds`` a float, ``page``, (best-worst) ``position`` and
        (Likert) ``score`` and ``shown_position`` integers. Empty (with those columns) before any answer.

    Raises
    ------
    StudyError
        No study of that id.
    """
    import pandas as pd

    with transaction(url) as session:
        study = load_study(session, study_id)
        rows: list[dict] = []
        for person in study.annotators:
            for asg in person.assignments:
                if asg.answer is None or (asg.item.gold is not None and not include_gold):
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
                    rows += _ROWS[study.task](base, asg.answer.choices[criterion], responses, asg.shown_order)
        return pd.DataFrame(rows, columns=EXPORT_COLUMNS[study.task])
