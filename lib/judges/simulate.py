"""Simulated human and judge votes with known skills: the coverage study of issue 20 ("Done when").

Humans vote by Bradley–Terry on the true skills. The judge copies the human vote with probability
``copy`` (it agrees with humans more than chance) and otherwise votes by Bradley–Terry with a bias of
``bias`` logits towards one ``favoured`` system (it is noisy and biased). Only the first
``n_labelled`` items have human votes; the judge rates all of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from lib.judges.ppi import SkillFit, classical_fit, design, rank_sets, skill_fit

STUDY_COLUMNS = [
    "dataset",
    "system",
    "truth",
    *(f"{est}_{what}" for est in ("human", "judge", "ppi") for what in ("covered", "width")),
    "rank_set_covered",
]
"""Columns of :func:`coverage_study`: per data set and system, whether each interval covers the
true skill and its width (logits), and whether the prediction-powered rank-set holds the true rank."""


def simulate_items(
    rng: np.random.Generator,
    skills: np.ndarray,
    n_items: int,
    *,
    copy: float,
    bias: float,
    favoured: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One data set of items: a random pair each, a human vote and a judge vote.

    Parameters
    ----------
    rng : numpy Generator
    skills : ndarray (K,)
        True skills (logits, summing to zero).
    n_items : int
    copy : float
        Probability in [0, 1] that the judge repeats the human vote.
    bias : float
        Logits added to the favoured system's skill in the judge's own votes.
    favoured : int
        Index of the system the judge favours.

    Returns
    -------
    (first, second, y, yhat)
        System indices (n_items,) of each item, the human score of ``first`` (0/1) and the judge's.
    """
    k = len(skills)
    first = rng.integers(0, k, n_items)
    second = (first + rng.integers(1, k, n_items)) % k
    gap = skills[first] - skills[second]
    y = (rng.random(n_items) < expit(gap)).astype(float)
    lean = bias * ((first == favoured).astype(float) - (second == favoured))
    own = (rng.random(n_items) < expit(gap + lean)).astype(float)
    yhat = np.where(rng.random(n_items) < copy, y, own)
    return first, second, y, yhat


def coverage_study(
    n_sets: int,
    *,
    seed: int = 0,
    n_systems: int = 6,
    n_items: int = 2000,
    n_labelled: int = 300,
    copy: float = 0.6,
    bias: float = 1.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Coverage and width of the human-only, judge-only and prediction-powered intervals.

    Skills are evenly spaced in [-1, 1]; the judge favours the weakest system. Each data set draws
    ``n_items`` items, of which the first ``n_labelled`` carry human votes (a random subset).

    Returns
    -------
    DataFrame
        :data:`STUDY_COLUMNS`, ``n_sets * n_systems`` rows.
    """
    rng = np.random.default_rng(seed)
    skills = np.linspace(-1.0, 1.0, n_systems)
    rows = []
    for d in range(n_sets):
        first, second, y, yhat = simulate_items(rng, skills, n_items, copy=copy, bias=bias)
        x = design(first, second, n_systems)
        lab = slice(0, n_labelled)
        unl = slice(n_labelled, None)
        fits: dict[str, SkillFit] = {
            "human": classical_fit(x[lab], y[lab], what="human votes"),
            "judge": classical_fit(x, yhat, what="judge votes"),
            "ppi": skill_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl]),
        }
        table = pd.DataFrame({"dataset": d, "system": np.arange(n_systems), "truth": skills})
        for name, fit in fits.items():
            low, high = fit.interval(level)
            table[f"{name}_covered"] = (low <= skills) & (skills <= high)
            table[f"{name}_width"] = high - low
        low, high = rank_sets(fits["ppi"], level)
        rank = np.arange(n_systems, 0, -1)  # the skills increase: the last system is first
        table["rank_set_covered"] = (low <= rank) & (rank <= high)
        rows.append(table)
    return pd.concat(rows, ignore_index=True)[STUDY_COLUMNS]
