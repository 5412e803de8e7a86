"""How good is a judge? Its verdicts against the human votes on the items both judged.

Items are written with their systems in sorted order (``system_low`` is "A", ``system_high`` "B",
:data:`lib.judges.read.ITEM_KEY`). The human majority on an item is the side its mean human score
favours (above 0.5: A, below: B, exactly 0.5: a tie), so an even split counts as a tie.

A judge's position bias is how much more often than 1/2 the system shown first wins. Each system pair's
two orders are averaged, so that the judge's preference for either system cancels: per item where the
judge saw both orders, or else, when the sides were randomised per vote (an arena: each prompt judged in
one order, drawn at random), per system pair over its prompts shown in each order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from lib.judges.read import ITEM_KEY

VERDICTS = ("A", "tie", "B")
"""The three verdicts on an item, in the confusion matrix's order (A = the pair's first system by name)."""

QUALITY_COLUMNS = [
    "judge",
    "n_items",
    "agreement",
    "kappa",
    "tie_rate",
    "position_bias",
    "position_bias_low",
    "position_bias_high",
    "position_bias_from",
]
"""Columns of ``judge_quality.csv``, one row per judge."""

BOTH_ORDERS, RANDOMISED_SIDES = "both orders", "randomised sides"
NOT_ESTIMABLE = "not estimable: every pair shown in one order only"
"""``position_bias_from``: the items judged in both orders, the system pairs shown in both orders over their
prompts (sides randomised per vote), or why there is no number (with every pair in one order, the order
cannot be told from the judge's preference for one of the two systems)."""

PREFERENCE_COLUMNS = ["judge", "system", "preference", "preference_low", "preference_high", "n_items"]
"""Columns of the per-system preference table (the judge's score of a system minus the humans')."""


@dataclass
class JudgeQuality:
    """Agreement of each judge with the humans.

    Attributes
    ----------
    table : DataFrame
        :data:`QUALITY_COLUMNS`: ``n_items`` items judged by the judge and by humans, ``agreement``
        the share of its verdicts there equal to the human majority, ``kappa`` Cohen's kappa of the
        two (Cohen 1960; ``sklearn.metrics.cohen_kappa_score``), ``tie_rate`` the share of all its
        usable verdicts that are ties, ``position_bias`` how much more often than 1/2 the system
        shown first wins (module docstring), with its interval, and ``position_bias_from`` what it was
        measured on (:data:`BOTH_ORDERS`, :data:`RANDOMISED_SIDES`, or :data:`NOT_ESTIMABLE` with NaN).
    confusion : dict of str to DataFrame
        Per judge, verdict counts: rows the human majority, columns the judge (:data:`VERDICTS`).
    preference : DataFrame
        :data:`PREFERENCE_COLUMNS`: per judge and system, the judge's mean score of the system minus
        the humans' over the items of the system both rated (> 0: the judge favours it), with an
        interval.
    """

    table: pd.DataFrame
    confusion: dict[str, pd.DataFrame]
    preference: pd.DataFrame


def verdict(score: np.ndarray) -> np.ndarray:
    """A / tie / B for scores of the first system (mean scores: the side they favour)."""
    return np.select([score > 0.5, score < 0.5], ["A", "B"], "tie")


def _mean_interval(values: np.ndarray, z: float) -> tuple[float, float, float]:
    """Mean and normal interval ``mean +- z sd / sqrt(m)``; NaN interval with fewer than 2 values."""
    if len(values) == 0:
        return np.nan, np.nan, np.nan
    mean = float(values.mean())
    if len(values) < 2:
        return mean, np.nan, np.nan
    half = z * float(values.std(ddof=1)) / np.sqrt(len(values))
    return mean, mean - half, mean + half


def position_bias(verdicts: pd.DataFrame, z: float) -> tuple[float, float, float, str]:
    """The first-shown system's excess win rate over 1/2, with a normal interval and what it was measured on.

    Both orders on one item (:data:`BOTH_ORDERS`): per item, ``b = (mean score of the first-shown system when
    A is first + the same when B is first) / 2 - 1/2``: 0 for a judge that ignores the order, +1/2 for one that
    always picks the first; the mean over items and its interval. Without any such item, sides randomised per
    vote (:data:`RANDOMISED_SIDES`, :func:`_randomised_sides`). Else NaN and :data:`NOT_ESTIMABLE`.

    Parameters
    ----------
    verdicts : DataFrame
        One judge's oriented verdicts (``first, score`` and ``ITEM_KEY``).
    z : float
        Normal quantile of the interval.

    Returns
    -------
    (estimate, low, high, measured_on)
    """
    first_is_a = verdicts["first"].to_numpy() == verdicts["system_low"].to_numpy()
    frame = verdicts.assign(first_score=np.where(first_is_a, verdicts["score"], 1 - verdicts["score"]), a=first_is_a)
    by_order = frame.pivot_table(index=ITEM_KEY, columns="a", values="first_score", aggfunc="mean")
    both = by_order.dropna() if by_order.shape[1] == 2 else by_order.iloc[:0]
    if len(both):
        return (*_mean_interval(((both[True] + both[False]) / 2 - 0.5).to_numpy(), z), BOTH_ORDERS)
    return _randomised_sides(frame, z)


def _randomised_sides(frame: pd.DataFrame, z: float) -> tuple[float, float, float, str]:
    """Position bias from one order per prompt, the order drawn per vote: stratified by system pair.

    In pair p, ``b_p = (m_p,low first + m_p,high first) / 2 - 1/2`` with ``m`` the mean score of the first-shown
    system over the prompts shown in that order: the judge's preference between the two systems cancels however
    unequal the two orders' shares are. The estimate weighs the pairs shown in both orders by ``w_p = 1 / (1 /
    n_low first + 1 / n_high first)`` (inverse variance); its variance is ``s^2 / (4 sum_p w_p)``, ``s^2`` the
    within-cell variance of the scores pooled over pairs and orders.
    """
    cells = frame.groupby(["system_low", "system_high", "a"])["first_score"]
    stats = cells.agg(["mean", "size"]).unstack("a").dropna()
    if stats.empty or stats.shape[1] < 4:
        return np.nan, np.nan, np.nan, NOT_ESTIMABLE
    weight = 1 / (1 / stats[("size", True)] + 1 / stats[("size", False)])
    b_pair = (stats[("mean", True)] + stats[("mean", False)]) / 2 - 0.5
    estimate = float((weight * b_pair).sum() / weight.sum())
    kept = frame.set_index(["system_low", "system_high"]).index.isin(stats.index)
    spread = frame[kept].groupby(["system_low", "system_high", "a"])["first_score"]
    dof = int(kept.sum()) - spread.ngroups
    deviation = frame.loc[kept, "first_score"] - spread.transform("mean")
    pooled = float((deviation**2).sum() / dof) if dof > 0 else np.nan
    half = z * np.sqrt(pooled / (4 * weight.sum()))
    return estimate, estimate - half, estimate + half, RANDOMISED_SIDES


def judge_quality(items: pd.DataFrame, verdicts: pd.DataFrame, *, level: float = 0.95) -> JudgeQuality:
    """Agreement, kappa, confusion matrix, tie rate, position bias and per-system preference.

    Parameters
    ----------
    items : DataFrame
        :func:`lib.judges.read.match_items`' items (``human_score`` NaN where no human voted).
    verdicts : DataFrame
        Its oriented verdicts (``judge, first, score`` and ``ITEM_KEY``).
    level : float
        Coverage of the intervals.

    Returns
    -------
    JudgeQuality
    """
    z = float(norm.ppf(0.5 + level / 2))
    human = items.dropna(subset=["human_score"])[[*ITEM_KEY, "human_score"]]
    rows, confusion, preference = [], {}, []
    for judge, own in verdicts.groupby("judge", sort=True):
        both = own.merge(human, on=ITEM_KEY)
        h, j = verdict(both["human_score"].to_numpy()), verdict(both["score"].to_numpy())
        kappa = cohen_kappa_score(h, j, labels=list(VERDICTS)) if len(set(h) | set(j)) > 1 else np.nan
        counts = confusion_matrix(h, j, labels=list(VERDICTS)) if len(h) else np.zeros((3, 3), dtype=int)
        confusion[str(judge)] = pd.DataFrame(
            counts,
            index=pd.Index([f"humans: {v}" for v in VERDICTS]),
            columns=pd.Index([f"judge: {v}" for v in VERDICTS]),
        )
        bias = position_bias(own, z)
        agreement = float(np.mean(h == j)) if len(h) else np.nan
        n_items = both[ITEM_KEY].drop_duplicates().shape[0]
        rows.append((judge, n_items, agreement, kappa, float(np.mean(own["score"] == 0.5)), *bias))
        # per item (a pair judged in both orders is one item), > 0: the judge scores system_low above the humans
        per_item = both.groupby(ITEM_KEY, as_index=False)[["score", "human_score"]].mean()
        gap = per_item["score"] - per_item["human_score"]
        sides = pd.concat(
            [
                pd.DataFrame({"system": per_item["system_low"], "gap": gap}),
                pd.DataFrame({"system": per_item["system_high"], "gap": -gap}),
            ]
        )
        for system, gaps in sides.groupby("system", sort=True)["gap"]:
            preference.append((judge, system, *_mean_interval(gaps.to_numpy(), z), len(gaps)))
    return JudgeQuality(
        pd.DataFrame(rows, columns=QUALITY_COLUMNS), confusion, pd.DataFrame(preference, columns=PREFERENCE_COLUMNS)
    )
