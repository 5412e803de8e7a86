"""Agreement so far of a study's judgments, per criterion: each task type's :class:`Agreement`.

- :data:`FLEISS_KAPPA` (best-worst, pairwise): Fleiss' kappa of the pairwise votes the export implies
  (:func:`lib.judgments.ratings.fleiss_kappa`), as the Data page computes it;
- :data:`KRIPPENDORFF_ALPHA` (Likert): Krippendorff's alpha with the interval metric of the ratings, a unit
  being a (prompt, system).

Krippendorff's alpha with the interval metric follows Krippendorff, K. (2011), "Computing Krippendorff's
Alpha-Reliability", Annenberg School for Communication, University of Pennsylvania (section C, the general
form; Hayes & Krippendorff 2007).
With the interval metric delta^2(c, k) = (c - k)^2, over the *pairable* values (units judged at least
twice; n values in all)

    alpha = 1 - D_o / D_e,
    D_o = (1 / n) sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1),
    D_e = 1 / (n (n - 1)) sum_{i != j} (v_i - v_j)^2,

and sum_{i != j} (v_i - v_j)^2 = 2 (m sum v^2 - (sum v)^2) over m values. Missing ratings (a unit
not judged by every annotator) are allowed; alpha is 1 for perfect agreement, 0 for agreement at
chance, below 0 for systematic disagreement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from lib.study.tasks.spec import TaskSpec


def _pair_sum(m: np.ndarray, total: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """Sum over ordered pairs i != j of (v_i - v_j)^2 from the count, sum and sum of squares."""
    return 2 * (m * squares - total**2)


def interval_alpha(units: Sequence[object], values: Sequence[float]) -> tuple[float, int]:
    """Krippendorff's alpha (interval metric) of ratings grouped into units.

    Parameters
    ----------
    units : sequence, shape (n,)
        The unit of each rating (e.g. a (prompt, system) key); ratings of one unit are by different
        annotators.
    values : sequence of float, shape (n,)
        The ratings.

    Returns
    -------
    alpha : float
        NaN when fewer than two units are pairable or every pairable rating is the same (D_e = 0).
    units : int
        Pairable units (judged at least twice).
    """
    import pandas as pd

    v = pd.Series(np.asarray(values, dtype=float))
    keys, _ = pd.factorize(pd.Series(list(units), dtype=object))  # tuples stay whole keys
    groups = v.groupby(keys, sort=False)
    m = groups.count().to_numpy(dtype=float)
    total = groups.sum().to_numpy(dtype=float)
    squares = (v**2).groupby(keys, sort=False).sum().to_numpy(dtype=float)
    keep = m >= 2
    n = m[keep].sum()
    if keep.sum() < 2:
        return float("nan"), int(keep.sum())
    observed = (_pair_sum(m[keep], total[keep], squares[keep]) / (m[keep] - 1)).sum() / n
    expected = _pair_sum(n, total[keep].sum(), squares[keep].sum()) / (n * (n - 1))
    return (float(1 - observed / expected) if expected > 0 else float("nan")), int(keep.sum())


def _kappa(table: pd.DataFrame, spec: TaskSpec) -> pd.DataFrame:
    """Fleiss' kappa per criterion of the votes the export implies."""
    import pandas as pd

    from lib.judgments.formats import read_judgments
    from lib.judgments.ratings import fleiss_kappa

    rows = []
    if len(table):
        votes = read_judgments(table.astype(str), spec.format, spec.roles, file="study export").votes
        for criterion, group in votes.groupby("criterion", sort=False):
            kappa, cells = fleiss_kappa(group)
            rows.append({"criterion": criterion, "fleiss_kappa": kappa, "cells": cells})
    return pd.DataFrame(rows, columns=["criterion", "fleiss_kappa", "cells"])


def _alpha(table: pd.DataFrame, spec: TaskSpec) -> pd.DataFrame:
    """Krippendorff's alpha (interval) per criterion of the ratings, a unit being a (prompt, system)."""
    import pandas as pd

    rows = []
    for criterion, group in table.groupby("criterion", sort=False):
        alpha, units = interval_alpha(list(zip(group.prompt_id, group.system, strict=True)), group.score)
        rows.append({"criterion": criterion, "krippendorff_alpha": alpha, "units": units})
    return pd.DataFrame(rows, columns=["criterion", "krippendorff_alpha", "units"])


@dataclass(frozen=True)
class Agreement:
    """How a task's agreement so far is measured: the statistic's column, what it is, its function
    ``compute(export, spec)`` (the study's export table and its task type) giving a row per criterion."""

    column: str
    help: str
    compute: Callable[[pd.DataFrame, TaskSpec], pd.DataFrame]


FLEISS_KAPPA = Agreement(
    "fleiss_kappa",
    "Fleiss' kappa of the pairwise votes the answers imply, per criterion (gold items left out).",
    _kappa,
)
"""The agreement of the pick tasks (best-worst, pairwise)."""
KRIPPENDORFF_ALPHA = Agreement(
    "krippendorff_alpha",
    "Krippendorff's alpha (interval metric) of the ratings, per criterion, a unit being a prompt's "
    "passage (gold items left out): 1 = full agreement, 0 = agreement at chance.",
    _alpha,
)
"""The agreement of the rated task (Likert)."""
