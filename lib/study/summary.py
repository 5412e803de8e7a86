"""The researcher's view of a study: progress, agreement so far, gold accuracy, seconds, speeders.

Speeders: an annotator whose median seconds per page is below :data:`SPEEDER_FRACTION` of the
study's median seconds per page (over every answered page of every annotator) is flagged. The rule
is relative, so it holds for pages of any length; it flags, it does not remove: the researcher decides.
Agreement: the task type's statistic (:attr:`lib.study.tasks.TaskSpec.agreement`, :mod:`lib.study.agreement`):
Fleiss' kappa of the pairwise votes the export implies for best-worst and pairwise, Krippendorff's alpha with
the interval metric of the ratings for Likert, per criterion.
A judgment is one pick per criterion of a page, or one rating of one passage per criterion
(:meth:`lib.study.tasks.TaskSpec.judgments`).

Annotator quality: the attention checks they passed (:mod:`lib.study.checks`; failing them flags the
annotator, and the export leaves them out), their agreement with the other annotators on the same items and
their reliability, Cohen's kappa of their answers against the Dawid-Skene truth
(:mod:`lib.judgments.annotator_quality`), beside their gold accuracy.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from lib.study.checks import failed
from lib.study.create import annotator_link
from lib.study.db import transaction
from lib.study.export import check_passes, export_judgments, load_study
from lib.study.models import Annotator, Answer, Assignment, Study
from lib.study.tasks import gold_correct, task_spec

if TYPE_CHECKING:
    import pandas as pd

SPEEDER_FRACTION = 0.3
"""An annotator is flagged when their median seconds per page is below this share of the study's."""

SPEEDER_RULE = (
    f"flagged when the annotator's median seconds per page is below {SPEEDER_FRACTION:.0%} of the "
    "study's median seconds per page"
)


@dataclass(frozen=True)
class StudySummary:
    """What the Studies page shows of one study.

    Attributes
    ----------
    annotators : pandas.DataFrame
        Per annotator: ``annotator, pages, done, gold_pages, gold_done, gold_accuracy, checks,
        checks_passed, failed_checks, agreement, reliability, median_seconds_per_page, seconds_per_judgment,
        speeder`` (NaN where nothing is answered yet; ``seconds_per_judgment`` the median over their pages;
        ``checks`` the attention-check pages answered, ``failed_checks`` True when they failed them,
        :func:`lib.study.checks.failed`; ``agreement`` and ``reliability`` from
        :func:`lib.judgments.annotator_quality.annotator_quality` over the regular and gold items), and for a study
        recruited on a crowd platform ``joined`` (whether a participant took the place).
    items : pandas.DataFrame
        Per item: ``prompt_id, systems, gold, annotators, done``.
    agreement : pandas.DataFrame
        Per criterion: ``criterion``, the task's statistic (its ``agreement``: ``fleiss_kappa`` or
        ``krippendorff_alpha``) and its ``cells`` / ``units`` (NaN until two of them are judged twice).
    median_seconds_per_judgment : float
        Over every answered page, its seconds divided by its judgments (criteria, times the passages
        for a rated task); NaN before any answer.
    gold_accuracy : float
        Share of the gold criteria answered as the gold answer says; NaN without any.
    """

    annotators: pd.DataFrame
    items: pd.DataFrame
    agreement: pd.DataFrame
    median_seconds_per_judgment: float
    gold_accuracy: float


def list_studies(*, url: str | None = None) -> pd.DataFrame:
    """Every study: ``study_id, name, task, criteria, annotators, pages, answered, created_at``."""
    import pandas as pd

    with transaction(url) as session:
        pages = dict(
            session.execute(
                select(Annotator.study_id, func.count(Assignment.id)).join(Assignment).group_by(Annotator.study_id)
            ).all()
        )
        answered = dict(
            session.execute(
                select(Annotator.study_id, func.count(Answer.id))
                .join(Assignment, Assignment.annotator_id == Annotator.id)
                .join(Answer, Answer.assignment_id == Assignment.id)
                .group_by(Annotator.study_id)
            ).all()
        )
        rows = [
            {
                "study_id": s.id,
                "name": s.name,
                "task": s.task,
                "criteria": ", ".join(s.criteria),
                "annotators": len(s.annotators),
                "pages": pages.get(s.id, 0),
                "answered": answered.get(s.id, 0),
                "created_at": s.created_at,
            }
            for s in session.scalars(select(Study).order_by(Study.id))
        ]
    return pd.DataFrame(
        rows, columns=["study_id", "name", "task", "criteria", "annotators", "pages", "answered", "created_at"]
    )


def study_links(study_id: int, base_url: str, *, url: str | None = None) -> pd.DataFrame:
    """``annotator, link, active`` per annotator of the study (the links hold the tokens: keep them private)."""
    import pandas as pd

    with transaction(url) as session:
        study = load_study(session, study_id)
        rows = [(a.label, annotator_link(base_url, a.token), a.active) for a in study.annotators]
    return pd.DataFrame(rows, columns=["annotator", "link", "active"])


def crowd_table(study_id: int, base_url: str, *, url: str | None = None) -> pd.DataFrame:
    """``platform, link``: a crowd study's one link, for Prolific and for other platforms
    (:func:`lib.study.crowd.crowd_links`); empty for a study with private links."""
    import pandas as pd

    from lib.study.crowd import crowd_links

    with transaction(url) as session:
        key = load_study(session, study_id).crowd_key
    rows = list(crowd_links(base_url, key).items()) if key else []
    return pd.DataFrame(rows, columns=["platform", "link"])


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(study_id: int, *, url: str | None = None) -> StudySummary:
    """Progress, agreement, gold accuracy, seconds and speeders of a study.

    Raises
    ------
    lib.study.errors.StudyError
        No study of that id.
    """
    import pandas as pd

    with transaction(url) as session:
        study = load_study(session, study_id)
        spec = task_spec(study.task)
        n_criteria = len(study.criteria)
        people: list[dict] = []
        per_item: dict[int, dict] = {}
        all_seconds: list[float] = []
        all_per_judgment: list[float] = []
        all_gold: list[bool] = []
        for person in study.annotators:
            seconds, per_judgment, gold_pages, gold_checks = [], [], 0, []
            for asg in person.assignments:
                item = asg.item
                if item.check:  # an attention check: counted apart (check_passes), not an item of the study
                    continue
                row = per_item.setdefault(
                    item.id,
                    {
                        "prompt_id": item.prompt_id,
                        "systems": ", ".join(s for s, _ in item.responses),
                        "gold": item.gold is not None,
                        "annotators": 0,
                        "done": 0,
                    },
                )
                row["annotators"] += 1
                gold_pages += item.gold is not None
                if asg.answer is None:
                    continue
                row["done"] += 1
                seconds.append(asg.answer.seconds)
                per_judgment.append(asg.answer.seconds / (n_criteria * spec.judgments(len(item.responses))))
                if item.gold is not None:
                    gold_checks += gold_correct(item.gold, asg.answer.choices)
            checks = check_passes(person)
            seconds += [a.answer.seconds for a in person.assignments if a.item.check and a.answer is not None]
            all_seconds += seconds
            all_per_judgment += per_judgment
            all_gold += gold_checks
            people.append(
                {
                    "annotator": person.label,
                    "pages": len(person.assignments),
                    "done": len(seconds),
                    "gold_pages": gold_pages,
                    "gold_done": len(gold_checks) // max(1, n_criteria),
                    "gold_accuracy": sum(gold_checks) / len(gold_checks) if gold_checks else float("nan"),
                    "checks": len(checks),
                    "checks_passed": sum(checks),
                    "failed_checks": failed(checks),
                    "median_seconds_per_page": _median(seconds),
                    "seconds_per_judgment": _median(per_judgment),
                    **({"joined": person.platform_hash is not None} if study.crowd_key else {}),
                }
            )
        labels = _answers(study)
    study_median = _median(all_seconds)
    annotators = pd.DataFrame(people)
    if len(annotators):
        quality = _quality(labels).reindex(annotators["annotator"])
        at = annotators.columns.get_loc("failed_checks") + 1
        annotators.insert(at, "agreement", quality["agreement"].to_numpy())
        annotators.insert(at + 1, "reliability", quality["reliability"].to_numpy())
        annotators["speeder"] = annotators["median_seconds_per_page"] < SPEEDER_FRACTION * study_median
    return StudySummary(
        annotators=annotators,
        items=pd.DataFrame(list(per_item.values()), columns=["prompt_id", "systems", "gold", "annotators", "done"]),
        agreement=spec.agreement.compute(export_judgments(study_id, url=url), spec),
        median_seconds_per_judgment=_median(all_per_judgment),
        gold_accuracy=sum(all_gold) / len(all_gold) if all_gold else float("nan"),
    )


def _answers(study: Study) -> list[tuple[object, str, str]]:
    """Every answer to a regular or gold item as Dawid-Skene ``(task, annotator, label)`` rows: a task per
    item, criterion and key (MOST, LEAST; the winner; each passage's rating), the label a system, "tie" or a
    rating."""
    rows: list[tuple[object, str, str]] = []
    for person in study.annotators:
        for asg in person.assignments:
            if asg.answer is None or asg.item.check:
                continue
            for criterion, choice in asg.answer.choices.items():
                for key, value in choice.items():
                    label = "tie" if key == "tie" else str(value)
                    rows.append(((asg.item.id, criterion, "winner" if key == "tie" else key), person.label, label))
    return rows


def _quality(rows: list[tuple[object, str, str]]) -> pd.DataFrame:
    """Agreement and reliability per annotator label (:func:`lib.judgments.annotator_quality.annotator_quality`)."""
    import pandas as pd

    from lib.judgments.annotator_quality import QUALITY_COLUMNS, annotator_quality

    if not rows:
        return pd.DataFrame(columns=QUALITY_COLUMNS).set_index("annotator")
    table = pd.DataFrame(rows, columns=["task", "worker", "label"])
    table["task"] = table["task"].map(repr)  # tuples as plain keys
    return annotator_quality(table).set_index("annotator")
