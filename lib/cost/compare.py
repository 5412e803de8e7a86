"""Two-group comparison as in Casares et al. 2022 (Table 1, Fig. 4) and Holm's correction.

Table 1: Shapiro-Wilk tests each group for normality and Levene tests equal variances (scipy's
default median-centred, Brown-Forsythe form, robust to the skew of Likert-derived losses); a
t-test is used when both hold, Mann-Whitney U otherwise. Fig. 4 uses Mann-Whitney U throughout
(effort times are far from normal). p-values across tasks are Holm-corrected (Holm 1979).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

MANN_WHITNEY = "Mann-Whitney U"
T_TEST = "t-test"
NO_TEST = "none"
COMPARE_COLUMNS = [
    "task",
    "n_with",
    "n_without",
    "median_with",
    "median_without",
    "shapiro_p_with",
    "shapiro_p_without",
    "levene_p",
    "test",
    "statistic",
    "p_value",
    "p_holm",
]
"""The columns of :func:`compare_by_task`, in order."""


@dataclass(frozen=True)
class Comparison:
    """Result of comparing group x (with the model) against group y (without).

    ``shapiro_p_*`` and ``levene_p`` are NaN where the check could not run (fewer than 3 values,
    or a group with no spread); ``test`` is ``NO_TEST`` and ``p_value`` NaN if a group is empty.
    """

    test: str
    statistic: float
    p_value: float
    shapiro_p_x: float
    shapiro_p_y: float
    levene_p: float


def _shapiro(values: np.ndarray) -> float:
    if len(values) < 3 or np.ptp(values) == 0:
        return float("nan")
    return float(stats.shapiro(values).pvalue)


def compare_groups(x: np.ndarray, y: np.ndarray, *, alpha: float = 0.05, mann_whitney_only: bool = False) -> Comparison:
    """Choose and run the test of Table 1 on two independent samples.

    Parameters
    ----------
    x, y : numpy.ndarray of float
        The two samples (NaN removed by the caller).
    alpha : float
        Level of the Shapiro-Wilk and Levene pre-tests: the t-test is chosen only if neither
        rejects (p > alpha for both groups' normality and for equal variances).
    mann_whitney_only : bool
        Run Mann-Whitney U whatever the pre-tests say (Fig. 4); the pre-tests are still reported.

    Returns
    -------
    Comparison
        Two-sided test: Student's t-test (``scipy.stats.ttest_ind``, equal variances) or
        Mann-Whitney U (``scipy.stats.mannwhitneyu``); ``NO_TEST`` when a group is empty.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    sx, sy = _shapiro(x), _shapiro(y)
    if len(x) == 0 or len(y) == 0:
        return Comparison(NO_TEST, float("nan"), float("nan"), sx, sy, float("nan"))
    spread = np.ptp(x) > 0 or np.ptp(y) > 0
    lev = float(stats.levene(x, y).pvalue) if len(x) > 1 and len(y) > 1 and spread else float("nan")
    normal = sx > alpha and sy > alpha  # NaN (not checkable) counts as not normal
    if not mann_whitney_only and normal and lev > alpha:
        res = stats.ttest_ind(x, y, equal_var=True)
        return Comparison(T_TEST, float(res.statistic), float(res.pvalue), sx, sy, lev)
    res = stats.mannwhitneyu(x, y, alternative="two-sided")
    return Comparison(MANN_WHITNEY, float(res.statistic), float(res.pvalue), sx, sy, lev)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm-corrected p-values (``statsmodels`` ``multipletests(method="holm")``); NaN stays NaN.

    Parameters
    ----------
    p_values : numpy.ndarray of float, shape (k,)
        One p-value per task; NaN for tasks without a test (left out of the family).

    Returns
    -------
    numpy.ndarray of float, shape (k,)
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def compare_by_task(data: pd.DataFrame, value: str, tasks: list[str], **options) -> pd.DataFrame:
    """Per task, ``value`` with the model (x) against without (y), Holm-corrected across tasks.

    Parameters
    ----------
    data : pandas.DataFrame
        ``task``, ``with_model`` (bool) and ``value``, NaN already removed.
    value : str
        Column compared.
    tasks : list of str
        The tasks, in the order of the rows returned.
    **options
        Passed to :func:`compare_groups` (``alpha``, ``mann_whitney_only``).

    Returns
    -------
    pandas.DataFrame
        :data:`COMPARE_COLUMNS` (medians NaN for an empty group).
    """
    records = []
    for task in tasks:
        t = data[data.task == task]
        x, y = t[value][t.with_model].to_numpy(), t[value][~t.with_model].to_numpy()
        c = compare_groups(x, y, **options)
        med_x, med_y = (float(np.median(v)) if len(v) else float("nan") for v in (x, y))
        records.append(
            (
                task,
                len(x),
                len(y),
                med_x,
                med_y,
                c.shapiro_p_x,
                c.shapiro_p_y,
                c.levene_p,
                c.test,
                c.statistic,
                c.p_value,
            )
        )
    out = pd.DataFrame(records, columns=COMPARE_COLUMNS[:-1])  # p_holm, the last, needs every task's p-value
    out["p_holm"] = holm(out.p_value.to_numpy())
    return out
