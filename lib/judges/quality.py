"""How good is a judge? Its verdicts against the human votes on the items both judged.

Items are written with their systems in sorted order (``system_low`` is "A", ``system_high`` "B",
:data:`lib.judges.read.ITEM_KEY`). The human majority on an item is the side its mean human score
favours (above 0.5: A, below: B, exactly 0.5: a tie), so an even split counts as a tie.
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
]
"""Columns of ``judge_quality.csv``, one row per judge."""

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
        shown first wins, from the items it judged in both orders (NaN without any), with its
        interval.
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


def position_bias(verdicts: pd.DataFrame, z: float) -> tuple[float, float, float]:
    """The first-shown system's excess win rate over 1/2, from items judged in both orders.

    Per item, ``b = (mean score of the first-shown system when A is first + mean score of the
    first-shown system when B is first) / 2 - 1/2``: 0 for a judge that ignores the order, +1/2 for
    one that always picks the first. Returns the mean over items and its normal interval.
    """
    first_is_a = verdicts["first"].to_numpy() == verdicts["system_low"].to_numpy()
    frame = verdicts.assign(first_score=np.where(first_is_a, verdicts["score"], 1 - verdicts["score"]), a=first_is_a)
    by_order = frame.pivot_table(index=ITEM_KEY, columns="a", values="first_score", aggfunc="mean")
    if by_order.shape[1] < 2:
        return np.nan, np.nan, np.nan
    both = by_order.dropna()
    return _mean_interval(((both[True] + both[False]) / 2 - 0.5).to_numpy(), z)


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
