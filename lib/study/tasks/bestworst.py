"""Best-worst scaling (seed 001's "Counterfactual AI Writing Study"): per criterion the MOST and the LEAST of
the k passages shown, MOST != LEAST.

The export is the best-worst format: one row per passage shown per criterion, ``judgment`` most / least /
middle, ``position`` 1 = shown first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lib.study.agreement import FLEISS_KAPPA
from lib.study.errors import AnswerError
from lib.study.tasks.spec import Scale, TaskSpec, export_columns, gold_picks, pick


def check(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    """The MOST and the LEAST of the passages shown, different (:attr:`TaskSpec.check`)."""
    most, least = pick(choice, "most", systems, criterion), pick(choice, "least", systems, criterion)
    if most == least:
        raise AnswerError(f"{criterion}: the MOST and the LEAST passage must differ")
    return {"most": most, "least": least}


def gold(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    """One MOST and one LEAST cell (:attr:`TaskSpec.gold`)."""
    if not gold_picks(cells, systems):
        return None
    most = [s for s in systems if cells[s] == "most"]
    least = [s for s in systems if cells[s] == "least"]
    if len(most) != 1 or len(least) != 1:
        raise AnswerError(f"the gold answer needs one MOST and one LEAST, found {len(most)} and {len(least)}")
    return {"most": most[0], "least": least[0]}


def asked(systems: Sequence[str], rng: np.random.Generator, scale: Scale | None) -> dict[str, object]:
    """Two different passages drawn as MOST and LEAST (:attr:`TaskSpec.asked`)."""
    most, least = (int(i) for i in rng.choice(len(systems), size=2, replace=False))
    return {"most": systems[most], "least": systems[least]}


def rows(base: dict, choice: dict, responses: dict, order: list[str]) -> list[dict]:
    """A row per passage shown, in the order shown (:attr:`TaskSpec.rows`)."""
    judged = {choice["most"]: "most", choice["least"]: "least"}
    return [
        {**base, "system": s, "response": responses[s], "judgment": judged.get(s, "middle"), "position": p}
        for p, s in enumerate(order, start=1)
    ]


SPEC = TaskSpec(
    "bestworst",
    "MOST and LEAST of the passages shown, per criterion",
    format="bestworst",
    min_systems=3,
    max_systems=0,
    keys=("most", "least"),
    tie=False,
    rated=False,
    check=check,
    gold=gold,
    gold_help="most, least or blank (one MOST and one LEAST per prompt)",
    asked=asked,
    columns=export_columns("system", "response", "judgment", "position"),
    rows=rows,
    roles={
        "prompt": "prompt_id",
        "annotator": "annotator",
        "system": "system",
        "judgment": "judgment",
        "trial": "page",
        "criterion": "criterion",
        "position": "position",
    },
    agreement=FLEISS_KAPPA,
)
"""The best-worst task type."""
