"""The task types a study can ask for: one registry, :data:`TASKS`, of :class:`TaskSpec` entries.

A task type is one module here (:mod:`~lib.study.tasks.bestworst`, :mod:`~lib.study.tasks.pairwise`,
:mod:`~lib.study.tasks.likert`: its answer check, gold cells, attention-check answer, export columns and
rows, the export's roles and its agreement statistic, gathered in its ``SPEC``) and one entry in
:data:`TASKS`; :mod:`lib.study.tasks.spec` says what an entry holds. The form, the checks, the export, the
summary, ``study create --task`` and the Studies page read the entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lib.study.errors import AnswerError, StudyError
from lib.study.tasks import bestworst, likert, pairwise
from lib.study.tasks.spec import TIE, Scale, TaskSpec, question

__all__ = ["TASKS", "TIE", "Scale", "TaskSpec", "check_choices", "gold_correct", "question", "task_spec"]

TASKS: dict[str, TaskSpec] = {t.name: t for t in (bestworst.SPEC, pairwise.SPEC, likert.SPEC)}
"""The registry of task types, in the order they are offered."""


def task_spec(task: str) -> TaskSpec:
    """``TASKS[task]``, or StudyError naming the task types."""
    if task not in TASKS:
        raise StudyError(f"unknown task '{task}'; choose one of {', '.join(TASKS)}")
    return TASKS[task]


def check_choices(
    task: str,
    choices: Mapping[str, object],
    systems: Sequence[str],
    criteria: Sequence[str],
    scale: Scale | None = None,
) -> dict[str, dict[str, object]]:
    """An answer's choices checked against its page.

    Parameters
    ----------
    task : str
        A key of :data:`TASKS`.
    choices : mapping
        ``{criterion: {key: system}}`` (a pick; a pairwise tie ``{"tie": True}``) or ``{criterion: {system:
        rating}}`` (a rated task).
    systems : sequence of str
        The systems shown on the page.
    criteria : sequence of str
        The study's criteria: each needs a choice, and no other may be given.
    scale : Scale, optional
        The study's scale (a rated task).

    Returns
    -------
    dict
        The choices normalised (only the task's keys, criteria in the study's order).

    Raises
    ------
    AnswerError
        A criterion missing or unknown, a choice missing or not among the systems shown, MOST = LEAST,
        a passage not rated, a rating that is not a whole number on the scale: every criterion that fails
        is named, joined by "; ".
    """
    spec = task_spec(task)
    if not isinstance(choices, Mapping):
        raise AnswerError("the answer must give a choice per criterion")
    unknown = [str(c) for c in choices if c not in criteria]
    if unknown:
        raise AnswerError(f"unknown criterion {', '.join(unknown)}; the study asks for {', '.join(criteria)}")
    out, problems = {}, []
    for criterion in criteria:  # every criterion that fails is named, not only the first
        choice = choices.get(criterion)
        try:
            if not isinstance(choice, Mapping):
                raise AnswerError(f"{criterion}: no choice given")
            out[criterion] = spec.check(choice, systems, criterion, scale)
        except AnswerError as err:
            problems.append(str(err))
    if problems:
        raise AnswerError("; ".join(problems))
    return out


def gold_correct(gold: Mapping[str, Mapping[str, object]], choices: Mapping[str, Mapping[str, object]]) -> list[bool]:
    """Per criterion with a gold answer, whether the choices match it on every key the gold answer
    gives (MOST and LEAST; the winner; each gold rating exactly)."""
    return [all(choices.get(c, {}).get(k) == v for k, v in g.items()) for c, g in gold.items()]
