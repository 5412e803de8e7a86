"""Likert ratings: per criterion a rating of every passage shown on the study's :class:`Scale`.

A page shows all the systems of a prompt, each on its own scale: the prompt is read once, and the order
shown (stored) lets a position effect on ratings be checked. The export is the ratings format: one row per
passage shown per criterion, ``score`` the rating, ``shown_position`` 1 = shown first (not named
``position``, which the Data page would take for the ranking format's rank).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lib.study.agreement import KRIPPENDORFF_ALPHA
from lib.study.errors import AnswerError, StudyError
from lib.study.tasks.spec import Scale, TaskSpec, export_columns


def check(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    """A rating on the scale of every passage shown, and of no other (:attr:`TaskSpec.check`)."""
    if scale is None:
        raise StudyError("a Likert study needs its scale")
    if set(choice) - set(systems):
        raise AnswerError(f"{criterion}: rate only the passages shown")
    missing = [s for s in systems if choice.get(s) is None]
    if missing:
        raise AnswerError(f"{criterion}: rate every passage ({len(missing)} not rated)")
    return {s: scale.rating(choice[s], criterion) for s in systems}


def gold(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    """The ratings of the systems whose cell is not blank (:attr:`TaskSpec.gold`)."""
    scale = scale or Scale()
    answer: dict[str, object] = {}
    for s in systems:
        if cells[s]:
            if not (cells[s].isascii() and cells[s].isdigit()):  # "²".isdigit() and "٣".isdigit() hold too
                raise AnswerError(
                    f"gold rating: a rating is a whole number from 1 to {scale.points} in the digits 0-9, "
                    f"not {cells[s]!r}"
                )
            answer[s] = scale.rating(int(cells[s]), "gold rating")
    return answer or None


def asked(systems: Sequence[str], rng: np.random.Generator, scale: Scale | None) -> dict[str, object]:
    """A rating drawn for every passage (:attr:`TaskSpec.asked`)."""
    points = (scale or Scale()).points
    return {s: int(rng.integers(1, points + 1)) for s in systems}


def rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    """A row per passage shown, in the order shown (:attr:`TaskSpec.rows`)."""
    return [
        {**base, "system": s, "response": responses[s], "score": choice[s], "shown_position": p}
        for p, s in enumerate(order, start=1)
    ]


SPEC = TaskSpec(
    "likert",
    "a rating of each passage shown (1 to the scale's points), per criterion",
    format="ratings",
    min_systems=1,
    max_systems=0,
    keys=(),
    tie=False,
    rated=True,
    check=check,
    gold=gold,
    gold_help="a rating from 1 to the scale's points on the systems whose rating is known, or blank",
    asked=asked,
    columns=export_columns("system", "response", "score", "shown_position"),
    rows=rows,
    roles={
        "prompt": "prompt_id",
        "system": "system",
        "score": "score",
        "annotator": "annotator",
        "criterion": "criterion",
        "prompt_text": "prompt_text",
        "response": "response",
    },
    agreement=KRIPPENDORFF_ALPHA,
)
"""The Likert rating task type."""
