"""Simulated human and judge votes with known skills: the coverage study of issue 20 ("Done when").

Humans vote by Bradley–Terry on the true skills, plus, with ``item_sd`` > 0, the item's own preference
u_i ~ N(0, item_sd) for its first system (some prompts suit one system of the pair better). The judge
copies the human vote with probability ``copy`` (it agrees with humans more than chance) and otherwise
casts its own vote by Bradley–Terry on the same item, u_i included, with a bias of ``bias`` logits
towards one ``favoured`` system. ``copy = 0`` and ``item_sd`` > 0 is the realistic judge (issue 30): it
tracks each item's preference but never sees the human vote, so with one human vote per item it knows
only the part of that vote the item explains. Only the first ``n_labelled`` items have human votes;
the judge rates all of them.
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
    item_sd: float = 0.0,
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
    item_sd : float
        SD (logits) of the items' own preference for their first system, shared by the human and the
        judge's own vote (0: none, and no draw is made, so earlier seeds give the same data).

    Returns
    -------
    (first, second, y, yhat)
        System indices (n_items,) of each item, the human score of ``first`` (0/1) and the judge's.
    """
    k = len(skills)
    first = rng.integers(0, k, n_items)
    second = (first + rng.integers(1, k, n_items)) % k
    gap = skills[first] - skills[second]
    if item_sd > 0:
        gap = gap + rng.normal(0.0, item_sd, n_items)
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
    item_sd: float = 0.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Coverage and width of the human-only, judge-only and prediction-powered intervals.

    Skills are evenly spaced in [-1, 1]; the judge favours the weakest system. Each data set draws
    ``n_items`` items, of which the first ``n_labelled`` carry human votes (a random subset), one
    vote each. ``copy``, ``bias`` and ``item_sd``: :func:`simulate_items`. With ``item_sd`` > 0 the
    true skills (column ``truth``) are the ones Bradley–Terry estimates, :func:`marginal_skills`.

    Returns
    -------
    DataFrame
        :data:`STUDY_COLUMNS`, ``n_sets * n_systems`` rows.
    """
    rng = np.random.default_rng(seed)
    skills = np.linspace(-1.0, 1.0, n_systems)
    truth = marginal_skills(skills, item_sd)
    rows = []
    for d in range(n_sets):
        first, second, y, yhat = simulate_items(rng, skills, n_items, copy=copy, bias=bias, item_sd=item_sd)
        x = design(first, second, n_systems)
        lab = slice(0, n_labelled)
        unl = slice(n_labelled, None)
        fits: dict[str, SkillFit] = {
            "human": classical_fit(x[lab], y[lab], what="human votes"),
            "judge": classical_fit(x, yhat, what="judge votes"),
            "ppi": skill_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl]),
        }
        table = pd.DataFrame({"dataset": d, "system": np.arange(n_systems), "truth": truth})
        for name, fit in fits.items():
            low, high = fit.interval(level)
            table[f"{name}_covered"] = (low <= truth) & (truth <= high)
            table[f"{name}_width"] = high - low
        low, high = rank_sets(fits["ppi"], level)
        rank = np.arange(n_systems, 0, -1)  # the skills increase: the last system is first
        table["rank_set_covered"] = (low <= rank) & (rank <= high)
        rows.append(table)
    return pd.concat(rows, ignore_index=True)[STUDY_COLUMNS]


def marginal_skills(skills: np.ndarray, item_sd: float) -> np.ndarray:
    """The skills Bradley–Terry estimates from votes whose items have their own preference.

    A vote of ``first`` over ``second`` has probability E_u logistic(s_first - s_second + u), u ~ N(0,
    item_sd), flatter than logistic(s_first - s_second): Bradley–Terry fitted to the expected votes of
    every ordered pair (the items' pairs are uniform, :func:`simulate_items`) gives the skills it
    estimates, shrunk towards 0 (u integrated by 40-node Gauss-Hermite).

    Parameters
    ----------
    skills : ndarray (K,)
        Skills (logits, summing to zero) of the votes' model.
    item_sd : float
        SD of the items' own preference (logits); 0 returns ``skills``.

    Returns
    -------
    ndarray (K,)
        Logits, summing to zero.
    """
    if item_sd == 0:
        return skills
    k = len(skills)
    first, second = np.nonzero(~np.eye(k, dtype=bool))
    z, w = np.polynomial.hermite_e.hermegauss(40)
    p = expit((skills[first] - skills[second])[:, None] + item_sd * z) @ (w / w.sum())
    return classical_fit(design(first, second, k), p, what="expected votes").skill
