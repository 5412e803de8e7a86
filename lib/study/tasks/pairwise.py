"""Pairwise judgments: per criterion the better of two passages, or a tie.

A tie is stored apart from system names (``{"tie": true}``), so a system may be called "tie". The export
is the pairwise format: one row per criterion, ``system_a`` the alphabetically first, ``choice`` A / B /
tie, ``position`` the system shown first (which :mod:`lib.judgments.formats` reads for the leaderboard's position
bias).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lib.study.agreement import FLEISS_KAPPA
from lib.study.errors import AnswerError
from lib.study.tasks.spec import GOLD_PICKS, TIE, Scale, TaskSpec, export_columns, gold_picks, pick


def check(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    """The winner among the two passages, or a tie (:attr:`TaskSpec.check`)."""
    if choice.get(TIE) is True:
        if len(choice) > 1:
            raise AnswerError(f"{criterion}: choose the better passage or a tie, not both")
        return {TIE: True}
    return {"winner": pick(choice, "winner", systems, criterion)}


def gold(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    """The higher :data:`GOLD_PICKS` score wins, equal scores tie (:attr:`TaskSpec.gold`)."""
    if not gold_picks(cells, systems):
        return None
    a, b = (GOLD_PICKS[cells[s]] for s in systems)
    return {"winner": systems[0] if a > b else systems[1]} if a != b else {TIE: True}


def asked(systems: Sequence[str], rng: np.random.Generator, scale: Scale | None) -> dict[str, object]:
    """A winner drawn (a tie would be an answer a careless annotator often gives; :attr:`TaskSpec.asked`)."""
    return {"winner": systems[int(rng.integers(len(systems)))]}


def rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    """One row, the pair in alphabetical order (:attr:`TaskSpec.rows`)."""
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


SPEC = TaskSpec(
    "pairwise",
    "the better of two passages (or a tie), per criterion",
    format="pairwise",
    min_systems=2,
    max_systems=2,
    keys=("winner",),
    tie=True,
    rated=False,
    check=check,
    gold=gold,
    gold_help="most on the better system, tie on both, or blank",
    asked=asked,
    columns=export_columns("system_a", "system_b", "response_a", "response_b", "choice", "position"),
    rows=rows,
    roles={
        "prompt": "prompt_id",
        "system_a": "system_a",
        "system_b": "system_b",
        "annotator": "annotator",
        "choice": "choice",
        "criterion": "criterion",
        "position": "position",
    },
    agreement=FLEISS_KAPPA,
)
"""The pairwise task type."""
