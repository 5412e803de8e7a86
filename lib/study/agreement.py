"""Agreement of ratings: Krippendorff's alpha with the interval metric.

Krippendorff, K. (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School for
Communication, University of Pennsylvania (section C, the general form; Hayes & Krippendorff 2007).
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

from collections.abc import Sequence

import numpy as np


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
