"""Attention checks: instructed items ("choose passage B as MOST FLUENT") at a set share of each annotator's pages.

An instructed item (an "instructed-response item", Meade & Craig 2012, "Identifying careless responses in
survey data", Psychological Methods 17(3)) shows a real page of the study, the passages of one of its items,
with a line that tells the annotator what to choose; an annotator who reads each page does so, one who clicks
without reading does not. The answer asked for is drawn at random per check (a MOST and a different LEAST
per criterion, a winner, or a rating of every passage) and stored as the item's gold answer; the line names
the passages by the labels (A, B, ...) they are shown with, so it is written when the page is shown
(:func:`instruction`). Checks are never judgments of the systems: the export leaves them out.

An annotator **fails** the checks when they answered at least one and at least :data:`FAIL_SHARE` of those
they answered against the instruction (:func:`failed`). The export and the leaderboard then leave out all of
that annotator's judgments unless asked to keep them (:mod:`lib.study.export`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lib.study.items import ItemSpec
from lib.study.tasks import TIE, Scale, question, task_spec

PROMPT_PREFIX = "attention-check-"
"""The prompt id of a check is this and its number (another suffix when a prompt of the items has that id)."""
FAIL_SHARE = 0.5
"""An annotator fails the checks when at least this share of the checks they answered went against the
instruction (one of one, one of two, two of four)."""
LEAD = "Please read carefully: this page checks attention. Whatever you think of the passages,"


def make_checks(
    items: Sequence[ItemSpec],
    n: int,
    *,
    task: str,
    criteria: Sequence[str],
    rng: np.random.Generator,
    scale: Scale | None = None,
) -> list[ItemSpec]:
    """``n`` instructed items made from the regular items' pages, each with the answer it will ask for.

    Parameters
    ----------
    items : sequence of ItemSpec
        The study's items; checks show the passages of regular ones (drawn without replacement while they
        last).
    n : int
        Checks to make.
    task : str
        A key of :data:`lib.study.tasks.TASKS`.
    criteria : sequence of str
        The study's criteria: every check asks for an answer on each.
    rng : numpy.random.Generator
        Draws the items shown and the answers asked for.
    scale : Scale, optional
        A rated task's scale (default :class:`lib.study.tasks.Scale`).

    Returns
    -------
    list of ItemSpec
        Gold answers in the task's shape (:mod:`lib.study.tasks`), prompt ids :data:`PROMPT_PREFIX` 1, 2, ...
    """
    spec = task_spec(task)
    regular = [it for it in items if it.gold is None]
    if n <= 0 or not regular:
        return []
    taken = {it.prompt_id for it in items}
    picks = [int(i) for i in rng.permutation(len(regular))]
    out = []
    for c in range(n):
        source = regular[picks[c % len(picks)]]
        systems = source.systems
        gold = {criterion: spec.asked(systems, rng, scale) for criterion in criteria}
        prompt_id = f"{PROMPT_PREFIX}{c + 1}"
        while prompt_id in taken:
            prompt_id += "-check"
        taken.add(prompt_id)
        out.append(ItemSpec(prompt_id, source.prompt_text, source.responses, gold))
    return out


def instruction(
    gold: Mapping[str, Mapping[str, object]],
    shown_order: Sequence[str],
    labels: Mapping[str, str],
    passage_labels: Sequence[str],
) -> str:
    """The line a check's page shows: what to choose, naming passages by the labels they are shown with.

    Parameters
    ----------
    gold : mapping
        The check's answer, ``{criterion: {...}}`` (:func:`make_checks`).
    shown_order : sequence of str
        The page's systems in the order shown.
    labels : mapping
        ``{criterion: label}`` of the study's questions (:func:`lib.study.tasks.question`).
    passage_labels : sequence of str
        The passages' labels by position (A, B, ...).

    Returns
    -------
    str
        E.g. "... choose passage B as MOST CONSISTENT and passage A as LEAST CONSISTENT; choose passage C as
        MOST FLUENT and passage B as LEAST FLUENT." (plain text: escape it for Markdown).
    """
    letter = dict(zip(shown_order, passage_labels, strict=False))
    parts = []
    for criterion, asked in gold.items():
        label = labels.get(criterion, criterion)
        if TIE in asked:
            parts.append(f"choose a tie ({question('winner', label)})")
        elif asked.keys() <= {"most", "least", "winner"}:
            picks = [f"passage {letter[str(v)]} as {question(k, label)}" for k, v in asked.items()]
            parts.append("choose " + " and ".join(picks))
        else:
            rates = [f"passage {letter[s]} {v}" for s, v in asked.items() if s in letter]
            parts.append(f"rate {', '.join(rates)} for {label.upper()}")
    return f"{LEAD} {'; '.join(parts)}."


def failed(passed: Sequence[bool]) -> bool:
    """Whether an annotator fails the checks: answered at least one, and at least :data:`FAIL_SHARE` of those
    answered went against the instruction (``passed``: one entry per check page answered)."""
    return bool(passed) and (len(passed) - sum(passed)) / len(passed) >= FAIL_SHARE
